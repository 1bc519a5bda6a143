#!/usr/bin/env bash
# deps_check.sh - the structure checks of issue 42 on manager/ and web/,
# run by `make test` (after `make all`, which builds the objects):
#
#   1. NO CYCLES between files. Each object (BUILD/manager/*.o,
#      BUILD/web/*.o) is a node; A -> B when one of A's undefined symbols
#      (nm) is defined by B. A cycle fails, printed with the symbols that
#      make each of its edges. The same graph folded to modules must be
#      acyclic too: web/ sits above manager/, never the other way.
#   2. LAYERS BY INCLUDE. No file of manager/ includes a header of web/;
#      no file of web/ includes the manager's private headers
#      (manager/mgr_internal.h, manager/tree_int.h): web/ reads a state
#      through the manager's public headers only.
#   3. FUNCTION LENGTH. A function of manager/*.c or web/*.c whose body
#      (from its opening brace at column 0 to its closing one) is over
#      MAX_LINES lines fails unless the comment just above it (the lines
#      since the last blank line) holds "LONG:" and a reason. Functions
#      are found by the house layout: the name at column 0, the braces at
#      column 0 (CONVENTIONS.md).
#   4. WHAT A FILE OWNS. Each .c file of manager/ and web/ opens with a
#      comment (before its first #include) that says what it owns
#      ("OWNS:") and what it may call ("CALLS:").
#
# Usage: tests/deps_check.sh [BUILD]   (from the repository's top; BUILD
# defaults to build). Exit 0 when every check passes, 1 otherwise (each
# failure on stderr).
set -u
BUILD=${1:-build}
MAX_LINES=${MAX_LINES:-100}
DIRS="manager web"

# Files counted as one node of the call graph, and functions allowed past
# the length without a "LONG:" reason: none. (Until the PN graph became
# pure under issue 42, the tree's three files called each other and were
# one node here.)
GROUPED=""
WAIVED=""

fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- 1. calls between files, from the objects ---------------------------

node_of() { # a source file's node in the graph
    case " $GROUPED " in
    *" $1 "*) echo "manager/tree_*.c" ;;
    *) echo "$1" ;;
    esac
}

: >"$tmp/def"
: >"$tmp/undef"
for d in $DIRS; do
    for c in "$d"/*.c; do
        [ -f "$c" ] || continue
        o="$BUILD/${c%.c}.o"
        if [ ! -f "$o" ]; then
            echo "deps_check: $o is missing (build first: make all)" >&2
            exit 1
        fi
        n=$(node_of "$c")
        # defined globals (text, data, bss, read-only) and undefined ones
        nm -g --defined-only "$o" | awk -v f="$n" 'NF == 3 { print $3, f }' >>"$tmp/def"
        nm -g --undefined-only "$o" | awk -v f="$n" '{ print f, $NF }' >>"$tmp/undef"
    done
done
# edges "A B SYMBOL", A != B
awk 'NR == FNR { def[$1] = $2; next }
     ($2 in def) && def[$2] != $1 { print $1, def[$2], $2 }' "$tmp/def" "$tmp/undef" |
    sort -u >"$tmp/edges"
# the same folded to modules (the folder)
awk '{ split($1, a, "/"); split($2, b, "/"); if (a[1] != b[1]) print a[1], b[1], $1 ":" $3 }' \
    "$tmp/edges" >"$tmp/medges"

# The cycles of a graph of "A B SYMBOL" lines (stdin): each strongly
# connected component of more than one node, printed with the edges
# inside it and the symbols that make them. The graphs are small (tens of
# files): reachability by Floyd-Warshall is plenty.
cycles() {
    awk '{ if (!($1 in id)) { id[$1] = ++n; name[n] = $1 }
           if (!($2 in id)) { id[$2] = ++n; name[n] = $2 }
           r[id[$1], id[$2]] = 1
           k = $1 " -> " $2; sym[k] = (k in sym) ? sym[k] " " $3 : $3 }
         END {
           for (k = 1; k <= n; k++) for (i = 1; i <= n; i++) if (r[i, k])
               for (j = 1; j <= n; j++) if (r[k, j]) r[i, j] = 1
           for (i = 1; i <= n; i++) {
               if (done[i] || !r[i, i]) continue
               line = ""
               for (j = 1; j <= n; j++) if (r[i, j] && r[j, i]) { done[j] = 1; line = line " " name[j] }
               print "deps_check: a cycle between" line ":"
               for (a = 1; a <= n; a++) for (b = 1; b <= n; b++) {
                   k = name[a] " -> " name[b]
                   if (a != b && (k in sym) && r[i, a] && r[a, i] && r[i, b] && r[b, i])
                       print "    " k ": " sym[k]
               }
           }
         }'
}
cycles <"$tmp/edges" >"$tmp/cyc"
cycles <"$tmp/medges" >>"$tmp/cyc"
if [ -s "$tmp/cyc" ]; then
    cat "$tmp/cyc" >&2
    fail=1
fi

# ---- 2. includes --------------------------------------------------------
for d in $DIRS; do
    case $d in
    manager) bad='"web/' ;;
    web) bad='"manager/(mgr_internal|tree_int)\.h"' ;;
    esac
    for f in "$d"/*.[ch]; do
        [ -f "$f" ] || continue
        if grep -nE "^#include $bad" "$f" >"$tmp/inc"; then
            sed "s|^|deps_check: $f:|; s|\$|: a private header of the layer below, or a layer above|" \
                "$tmp/inc" >&2
            fail=1
        fi
    done
done

# ---- 3. function length -------------------------------------------------
for d in $DIRS; do
    for f in "$d"/*.c; do
        [ -f "$f" ] || continue
        awk -v f="$f" -v max="$MAX_LINES" -v waived=" $WAIVED " '
            /^$/ && !body { above = ""; next }
            /^[A-Za-z_][A-Za-z0-9_]*\(/ && !body {
                name = $0; sub(/\(.*/, "", name); note = above; at = NR
            }
            /^\{/ && name != "" && !body { body = NR }
            /^\}/ && body {
                n = NR - body + 1
                w = index(waived, " " f ":" name " ") > 0
                if (n > max && note !~ /LONG:/ && !w)
                    printf "deps_check: %s:%d: %s is %d lines (over %d) with no \"LONG:\" reason above it\n",
                        f, at, name, n, max
                if (n > longest && !w) { longest = n; lname = name }
                name = ""; body = 0; above = ""; next
            }
            !body { above = above "\n" $0 }
            END { print f, longest, lname > "/dev/stderr" }
        ' "$f" >"$tmp/long" 2>>"$tmp/longest"
        if [ -s "$tmp/long" ]; then
            cat "$tmp/long" >&2
            fail=1
        fi
    done
done

# ---- 4. the opening comment ------------------------------------------------
for d in $DIRS; do
    for f in "$d"/*.c; do
        [ -f "$f" ] || continue
        case " $GROUPED " in *" $f "*) continue ;; esac
        for word in OWNS: CALLS:; do
            if ! sed '/^#include/q' "$f" | grep -q "$word"; then
                echo "deps_check: $f: its opening comment does not say $word" >&2
                fail=1
            fi
        done
    done
done

if [ "$fail" -eq 0 ]; then
    ne=$(awk '{ print $1, $2 }' "$tmp/edges" | sort -u | wc -l)
    top=$(sort -k2,2nr "$tmp/longest" | head -1)
    echo "deps_check: $DIRS: $ne edges between files and no cycle; the layers kept by include;" \
        "no function over $MAX_LINES lines without a reason (the longest not waived: ${top:-none});" \
        "every file says what it owns and calls"
fi
exit "$fail"
