// Command fxquant imports, quantizes, prints, verifies, diffs and draws
// PyTorch-2-export (PT2E) programs; run "fxquant help" for its usage.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
