/*
Command fxquant works on PyTorch-2-export programs without Python: it reads
.pt2 archives, export JSON programs and fxquant's golden text format, runs the
PT2E quantization flow on them, and prints, verifies, diffs, draws and
searches their graphs.

# Usage

	fxquant run [FILE] [--quantizer Q] [--reference] [--calibration N | --calibration-data FILE] [--eval-data FILE | --hold-back K | --no-compare] [-o OUT.pt2] [--dot OUT.dot]
	fxquant print FILE
	fxquant verify FILE
	fxquant diff A B
	fxquant dot FILE
	fxquant match --pattern PATTERN FILE [--match-output] [--match-placeholder] [--keep-overlapping] [--ignore-literals]
	fxquant help

FILE is a .pt2 archive, an export JSON program (.json), or a graph in the
golden text format (.txt, as "fxquant print" writes it; a PyTorch fixture
listing "name | op | target | args | kwargs" is read too).

"fxquant run" with no FILE quantizes the program embedded in the binary: the
PyTorch-exported MLP of the pt2e fixtures (Linear(32,64), ReLU, Linear(64,16)).

# Exit status

0 on success; 1 when verify finds problems or diff finds differences; 2 for
bad usage (unknown command or flag, missing argument); 1 for any other error,
which is written to stderr naming the file, node or field concerned.
*/
package main
