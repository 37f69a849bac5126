# Generates sdpa_math.json: scaled_dot_product_attention on inputs PyTorch
# 2.14.1's CPU dispatcher does not send to the flash kernel (value head size
# other than the query's, 5-D) and one GQA case (which it does). Run in the
# oracle like gen_vectors.py, with gen_vectors.py beside it in /tmp:
#   /work/shared/oracle/py.sh /tmp/gen_sdpa_math.py /tmp/sdpa_math.json
import torch, json, sys
import torch.nn.functional as F
exec(open(__file__.replace("gen_sdpa_math.py", "gen_vectors.py")).read().split("# scaled_dot_product_attention")[0])
torch.set_num_threads(1)
res = []
for name, (qs, ks, vs, kw) in {"ev": ([2, 3, 5, 8], [2, 3, 7, 8], [2, 3, 7, 6], {}),
                               "five_d": ([2, 2, 3, 5, 8], [2, 2, 3, 7, 8], [2, 2, 3, 7, 8], {}),
                               "ev_causal": ([1, 2, 9, 8], [1, 2, 9, 8], [1, 2, 9, 4], {"is_causal": True}),
                               "gqa": ([1, 4, 5, 8], [1, 2, 7, 8], [1, 2, 7, 8], {"enable_gqa": True})}.items():
    sq, q = inp(4000 + len(res), qs)
    sk, k = inp(4100 + len(res), ks)
    sv, v = inp(4200 + len(res), vs)
    o = F.scaled_dot_product_attention(q, k, v, **kw)
    res.append({"name": name, "inputs": [sq, sk, sv], "kw": kw, "flash": int(torch._fused_sdp_choice(q, k, v, **kw)) == 1, "out": rec(o)})
json.dump(res, open(sys.argv[1], "w"))
print([(r["name"], r["flash"]) for r in res])
