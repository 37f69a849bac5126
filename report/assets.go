package report

// pageCSS styles the page. Node fills: s5 (SQNR >= 40 dB) green to s1
// (< 10 dB) red, s0 no number; q/dq nodes have a purple dashed border.
const pageCSS = `body{font:13px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fff}
header{padding:8px 16px;background:#2d3a4a;color:#fff}h1{font-size:18px;margin:0}
h2{font-size:14px;margin:6px 0}
#run{display:flex;flex-wrap:wrap;gap:24px;padding:8px 16px;border-top:1px solid #ddd}
.kv table{border-collapse:collapse}.kv th{text-align:left;font-weight:600;padding:1px 12px 1px 0;vertical-align:top}
.kv td{font-family:ui-monospace,monospace;white-space:pre-wrap}
#legend{padding:6px 16px 0}.lg{margin-right:18px;white-space:nowrap}.sw{display:inline-block;width:14px;height:12px;border:1px solid #888;margin:0 3px 0 8px;vertical-align:middle}
.qsw{border:2px dashed #7b3fb5}.note{color:#a04000;white-space:normal}
#graphs{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr) 340px;gap:8px;padding:8px 16px}
.pane{border:1px solid #ccc;border-radius:4px;min-width:0}.pane h2{padding:4px 8px;margin:0;background:#f3f3f3;border-bottom:1px solid #ccc}
.count{font-weight:normal;color:#666}
.scroll{overflow:auto;height:70vh}.band{content-visibility:auto;overflow:hidden}.band svg{display:block}
svg .edges{fill:none;stroke:#8a96a3;stroke-width:1}
g.n{cursor:pointer}g.n rect{stroke:#555;stroke-width:1}
g.n text{font:11px sans-serif;fill:#111;text-anchor:middle;pointer-events:none}
g.n text.op{fill:#444}g.n text.qp{fill:#5a2a8a;font-size:10px}
g.qdq rect{stroke:#7b3fb5;stroke-width:2;stroke-dasharray:4 2}g.ref rect{stroke-dasharray:1 2}
g.obs rect{stroke-width:1.5}
g.sel rect{stroke:#0057d9;stroke-width:3;stroke-dasharray:none}
g.s0 rect{fill:#f2f2f2}.sw.s0,tr.s0 td{background:#f2f2f2}
g.s1 rect{fill:#f08a80}.sw.s1,tr.s1 td{background:#f08a80}
g.s2 rect{fill:#f9b97f}.sw.s2,tr.s2 td{background:#f9b97f}
g.s3 rect{fill:#fbe39a}.sw.s3,tr.s3 td{background:#fbe39a}
g.s4 rect{fill:#d9efa0}.sw.s4,tr.s4 td{background:#d9efa0}
g.s5 rect{fill:#b7e4a8}.sw.s5,tr.s5 td{background:#b7e4a8}
#details{border:1px solid #ccc;border-radius:4px;padding:0 8px 8px;overflow:auto;height:calc(70vh + 30px)}
#details pre{white-space:pre-wrap;word-break:break-all;font-size:11px;background:#f7f7f7;padding:4px}
#details table{border-collapse:collapse}#details th{text-align:left;padding-right:10px}
.hint{color:#666}.hist svg{background:#fafafa;border:1px solid #ddd}.hist rect{fill:#4a78b0}
#nodes{padding:8px 16px}#node-table{border-collapse:collapse;font-size:12px}
#node-table th{cursor:pointer;background:#eee;padding:3px 8px;text-align:left;position:sticky;top:0}
#node-table th.asc:after{content:" \25B2"}#node-table th.desc:after{content:" \25BC"}
#node-table td{padding:2px 8px;border-bottom:1px solid #fff;font-family:ui-monospace,monospace}
#node-table tr{cursor:pointer}#node-table tr.sel td{outline:2px solid #0057d9}
`

// pageJS makes the page interactive: selecting a node (in either graph
// or the table) shows its printed line, its numbers and its histogram,
// and selects the node with the same handle in the other graph; the
// table sorts by any column and filters by a search string.
const pageJS = `(function(){
"use strict";
var selected=[];
var D=JSON.parse(document.getElementById("report-data").textContent);
var other={f:"q",q:"f"},names={f:"Float graph",q:"Quantized graph"};
var els={f:[],q:[]},panes={},bandDivs={};
function renderBand(g,k){
  var d=bandDivs[g][k];if(!d||d.firstChild)return;
  d.innerHTML=D.bands[g][k];
  Array.prototype.forEach.call(d.querySelectorAll("g.n"),function(e){els[g][+e.getAttribute("data-i")]=e;});
  selected.forEach(function(s){if(s.g===g&&s.i>=0&&els[g][s.i])els[g][s.i].classList.add("sel");});
}
function nodeEl(g,i){var n=D.graphs[g][i];if(!n)return null;renderBand(g,n.b);return els[g][i];}
window.fxqRenderAll=function(){["f","q"].forEach(function(g){for(var k=0;k<bandDivs[g].length;k++)renderBand(g,k);});};
["f","q"].forEach(function(g){
  var box=document.getElementById("svg-"+g);
  panes[g]=box.parentNode;
  bandDivs[g]=box.querySelectorAll("div.band");
  var io=new IntersectionObserver(function(es){
    es.forEach(function(e){if(e.isIntersecting)renderBand(g,+e.target.getAttribute("data-b"));});
  },{root:panes[g],rootMargin:"800px 0px"});
  Array.prototype.forEach.call(bandDivs[g],function(d){io.observe(d);});
  box.addEventListener("click",function(ev){
    var t=ev.target.closest("g.n");
    if(t){select(g,+t.getAttribute("data-i"),false);}
  });
});
var rows=Array.prototype.slice.call(document.querySelectorAll("#node-table tbody tr"));
var byResult={};rows.forEach(function(tr){if(tr.hasAttribute("data-r"))byResult[tr.getAttribute("data-r")]=tr;});
function clearSel(){selected.forEach(function(s){if(s.e)s.e.classList.remove("sel");});selected=[];}
function mark(e,g,i){if(e){e.classList.add("sel");}selected.push({e:e,g:g,i:i===undefined?-1:i});}
function markNode(g,i){mark(nodeEl(g,i),g,i);}
function reveal(g,i){
  var e=nodeEl(g,i),p=panes[g];if(!e)return;
  var b=e.getBBox();
  p.scrollTop=Math.max(0,b.y-p.clientHeight/2);
  p.scrollLeft=Math.max(0,b.x+b.width/2-p.clientWidth/2);
}
function el(tag,text,cls){var e=document.createElement(tag);if(text!==undefined)e.textContent=text;if(cls)e.className=cls;return e;}
function select(g,i,scrollBoth){
  var n=D.graphs[g][i];if(!n)return;
  clearSel();markNode(g,i);
  var r=n.r>=0?D.results[n.r]:null;
  if(r){
    var oi=g==="f"?r.qi:r.fi;
    if(oi>=0){markNode(other[g],oi);reveal(other[g],oi);}
    mark(byResult[n.r]);
  }
  if(scrollBoth)reveal(g,i);
  show(g,n,r);
}
function show(g,n,r){
  var body=document.getElementById("detail-body");body.textContent="";
  body.appendChild(el("h3",n.n,"d-name"));
  body.appendChild(el("p",names[g]));
  body.appendChild(el("pre",n.l,"d-line"));
  if(r){
    var t=el("table");t.id="d-nums";
    [["handle",String(r.handle),"d-handle"],["float node",r.f],["quantized node",r.q],["target",r.target],
     ["SQNR (dB)",r.sqnr,"d-sqnr"],["max abs err",r.err,"d-err"],["min",r.min,"d-min"],["max",r.max,"d-max"],
     ["growth (dB)",r.growth,"d-growth"]].forEach(function(x){
      var tr=el("tr");tr.appendChild(el("th",x[0]));var td=el("td",x[1]);if(x[2])td.id=x[2];tr.appendChild(td);t.appendChild(tr);
    });
    body.appendChild(t);
  }else{
    body.appendChild(el("p","No per-node numbers for this node.","hint"));
  }
  if(n.h&&D.hist[n.h])body.appendChild(hist(n.h,D.hist[n.h]));
}
function hist(key,h){
  var div=el("div",undefined,"hist");div.id="d-hist";
  div.appendChild(el("h3","Observed activation: "+key));
  var W=300,H=110,ns="http://www.w3.org/2000/svg";
  var svg=document.createElementNS(ns,"svg");svg.setAttribute("width",W);svg.setAttribute("height",H+16);
  var m=0;h.counts.forEach(function(c){m=Math.max(m,+c);});
  var bw=W/h.counts.length;
  h.counts.forEach(function(c,k){
    var bh=m>0?(+c)/m*H:0,r=document.createElementNS(ns,"rect");
    r.setAttribute("x",(k*bw).toFixed(2));r.setAttribute("y",(H-bh).toFixed(2));
    r.setAttribute("width",Math.max(bw-0.5,0.5).toFixed(2));r.setAttribute("height",bh.toFixed(2));
    var tt=document.createElementNS(ns,"title");tt.textContent=c;r.appendChild(tt);svg.appendChild(r);
  });
  [[0,"start",h.min],[W,"end",h.max]].forEach(function(a){
    var tx=document.createElementNS(ns,"text");tx.setAttribute("x",a[0]);tx.setAttribute("y",H+13);
    tx.setAttribute("text-anchor",a[1]);tx.setAttribute("font-size","11");tx.textContent=a[2];svg.appendChild(tx);
  });
  div.appendChild(svg);
  div.appendChild(el("p",h.counts.length+" bars over ["+h.min+", "+h.max+"], from "+h.obs));
  return div;
}
function selectRow(tr){
  if(tr.hasAttribute("data-r")){
    var r=D.results[+tr.getAttribute("data-r")];
    if(r.fi>=0){select("f",r.fi,true);}else if(r.qi>=0){select("q",r.qi,true);}
  }else if(tr.hasAttribute("data-f")){
    select("f",+tr.getAttribute("data-f"),true);mark(tr);
  }
}
document.querySelector("#node-table tbody").addEventListener("click",function(ev){
  var tr=ev.target.closest("tr");if(tr)selectRow(tr);
});
var worst=document.querySelector("#worst a");
if(worst)worst.addEventListener("click",function(ev){ev.preventDefault();selectRow(byResult[worst.getAttribute("data-r")]);});
var ths=document.querySelectorAll("#node-table th");
Array.prototype.forEach.call(ths,function(th){
  th.addEventListener("click",function(){
    var c=+th.getAttribute("data-c"),numeric=th.getAttribute("data-k")==="n";
    var asc=!th.classList.contains("asc");
    Array.prototype.forEach.call(ths,function(x){x.classList.remove("asc","desc");});
    th.classList.add(asc?"asc":"desc");
    var keyed=rows.map(function(tr,k){
      var td=tr.children[c];
      return {tr:tr,k:k,v:numeric?parseFloat(td.getAttribute("data-v")||td.textContent):td.textContent};
    });
    keyed.sort(function(a,b){
      var d=numeric?a.v-b.v:(a.v<b.v?-1:a.v>b.v?1:0);
      if(d!==0&&!isNaN(d))return asc?d:-d;
      return a.k-b.k;
    });
    var tb=document.querySelector("#node-table tbody");
    keyed.forEach(function(x){tb.appendChild(x.tr);});
    rows=keyed.map(function(x){return x.tr;});
  });
});
var filter=document.getElementById("filter"),shown=document.getElementById("shown");
function applyFilter(){
  var q=filter.value.toLowerCase(),n=0;
  rows.forEach(function(tr){
    var hit=q===""||tr.textContent.toLowerCase().indexOf(q)>=0;
    tr.style.display=hit?"":"none";if(hit)n++;
  });
  shown.textContent=n+" of "+rows.length+" rows";
}
filter.addEventListener("input",applyFilter);
filter.addEventListener("keydown",function(ev){
  if(ev.key!=="Enter")return;
  var q=filter.value.toLowerCase();
  for(var k=0;k<rows.length;k++){if(rows[k].style.display!=="none"){selectRow(rows[k]);return;}}
  ["f","q"].some(function(g){
    for(var i=0;i<D.graphs[g].length;i++){if(D.graphs[g][i].n.toLowerCase().indexOf(q)>=0){select(g,i,true);return true;}}
    return false;
  });
});
applyFilter();
// Start each graph at its first input, horizontally centred on it.
["f","q"].forEach(function(g){
  for(var i=0;i<D.graphs[g].length;i++){
    if(D.graphs[g][i].l.indexOf("] = placeholder[")>=0){
      var e=nodeEl(g,i),p=panes[g];
      if(e){var b=e.getBBox();p.scrollLeft=Math.max(0,b.x+b.width/2-p.clientWidth/2);}
      return;
    }
  }
});
})();
`
