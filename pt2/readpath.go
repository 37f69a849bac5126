package pt2

import "fmt"

// The reader decodes a program twice only when it fails: first in fast
// mode, where every field path is the sentinel fastPath (so no path
// string is built) and the document, validated once up front, is split
// with a non-validating skipper; then, only if that pass returns an
// error, again in the original checked mode with real paths, whose error
// is the one returned. Decoding is deterministic and no decision depends
// on a path's text, so both passes fail on the same documents, and the
// error the caller sees is the one the checked mode has always given.
//
// The helpers below build a path only outside fast mode; in fast mode
// they return fastPath itself, so fast mode propagates down the decode.

// fastPath is the path of every field in fast mode. It is no path a
// document can produce: real paths start with a key or are empty.
const fastPath = "\x00"

// subPath is joinPath (path.key, or key at the root), lazily.
func subPath(path, key string) string {
	if path == fastPath {
		return fastPath
	}
	return joinPath(path, key)
}

// dotPath is path + "." + s, lazily.
func dotPath(path, s string) string {
	if path == fastPath {
		return fastPath
	}
	return path + "." + s
}

// catPath is path + s, lazily.
func catPath(path, s string) string {
	if path == fastPath {
		return fastPath
	}
	return path + s
}

// indexPath is path[i], lazily.
func indexPath(path string, i int) string {
	if path == fastPath {
		return fastPath
	}
	return fmt.Sprintf("%s[%d]", path, i)
}

// keyPath is path["key"] (key quoted as %q quotes it), lazily.
func keyPath(path, key string) string {
	if path == fastPath {
		return fastPath
	}
	return fmt.Sprintf("%s[%q]", path, key)
}
