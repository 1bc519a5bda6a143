#!/bin/sh
# bench/egdb-stats-8.sh DB [CHECKERS] - the 8-piece part of `egdb stats`
# as markdown (results/egdb-stats-8.md): positions, wins, losses and draws
# by material and by split, the compressed sizes, and each split's count
# beside the published one (../shared/reference/position-counts.md) and
# the index's own (`egdb count --pieces 8`). A split is listed when every
# one of its materials is in DB; a split partly built is listed apart.
set -eu
db=$1
c=${2:-bin/checkers}
T=$(mktemp -d "${TMPDIR:-/tmp}/egdb-stats-8.XXXXXX")
trap 'rm -rf "$T"' EXIT
"$c" egdb stats --db "$db" >"$T/stats"
"$c" egdb count --pieces 8 >"$T/count"
# Published counts by split ("| 8 | 4-4 | 111,378,534,401 |").
ref=$(dirname "$0")/../../shared/reference/position-counts.md
[ -f "$ref" ] && grep -E '^\| 8 \| [0-9]-[0-9] \|' "$ref" | tr -d ' ,' |
    awk -F'|' '{ split($3, a, "-"); print a[1] "v" a[2], $4 }' >"$T/published" || : >"$T/published"

echo "# Endgame databases: 8 pieces"
echo
echo "Written by \`bench/egdb-stats-8.sh $db\` (\`checkers egdb stats --db $db\`, its 8-piece"
echo "materials) on $(date -u +%Y-%m-%d). Values are for the side to move, Black to move stored;"
echo "materials are bk wk bm wm; a split \"4v4\" is the materials with four pieces a side."
echo "*seconds* is each material's build time from \`build-log.tsv\` (the slice pairs, without the"
echo "pipeline's stages: check, compress, compare); a material and its colour twin are one unit"
echo "and carry the unit's time, counted once in a split's sum. Every material here has no 2-bit file left: it"
echo "is read from its compressed files (docs/egdb.md, \"Eight pieces\")."
echo
awk -v pub="$T/published" -v cnt="$T/count" '
function split_of(m,   b, w) {
    b = substr(m, 1, 1) + substr(m, 3, 1); w = substr(m, 2, 1) + substr(m, 4, 1)
    return (b >= w ? b "v" w : w "v" b)
}
function commas(x,   s, r) {
    s = sprintf("%.0f", x); r = ""
    while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) }
    return s r
}
BEGIN {
    while ((getline l < pub) > 0) { split(l, a, " "); published[a[1]] = a[2] }
    while ((getline l < cnt) > 0) {
        n = split(l, a, /[ \t]+/)
        if (a[1] == 8 && a[2] ~ /-/) { split(a[2], b, "-"); index_count[b[1] "v" b[2]] = a[3] }
    }
}
$1 ~ /^[0-9][0-9][0-9][0-9]$/ {
    m = $1
    n = substr(m, 1, 1) + substr(m, 2, 1) + substr(m, 3, 1) + substr(m, 4, 1)
    if (n < 8) { small_c += $9; small_p += $3 }
    if (n != 8) next
    s = split_of(m)
    mats[s] = mats[s] " " m
    nm[s]++
    pos[m] = $3; win[m] = $4; los[m] = $5; drw[m] = $6; sec[m] = $7; cb[m] = $9
    P[s] += $3; W[s] += $4; L[s] += $5; D[s] += $6; C[s] += $9
    # A material and its colour twin are built as one unit and both
    # carry the time of the unit: count it once.
    twin = substr(m, 2, 1) substr(m, 1, 1) substr(m, 4, 1) substr(m, 3, 1)
    if (m <= twin) S[s] += $7
}
END {
    print "## By split"
    print ""
    print "| split | materials | positions | published | the index | wins | losses | draws | build s | compressed MB | positions a byte |"
    print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for (s in P) {
        p = (s in published) ? commas(published[s]) (published[s] == P[s] ? " (equal)" : " (DIFFERENT)") : "-"
        q = (s in index_count) ? commas(index_count[s]) (index_count[s] == P[s] ? " (equal)" : " (not all built)") : "-"
        printf "| %s | %d | %s | %s | %s | %s | %s | %s | %.0f | %.1f | %.1f |\n", s, nm[s], commas(P[s]), p, q,
            commas(W[s]), commas(L[s]), commas(D[s]), S[s], C[s] / 1e6, P[s] / (C[s] ? C[s] : 1)
    }
    print ""
    for (s in P) { all_p += P[s]; all_c += C[s] }
    printf "With the 1-7 set (%s positions, %.1f MB compressed), the folder holds %s positions in %.1f MB of compressed files.\n",
        commas(small_p), small_c / 1e6, commas(small_p + all_p), (small_c + all_c) / 1e6
    print ""
    print "## By material"
    print ""
    print "| material | split | positions | wins | losses | draws | build s | compressed bytes | positions a byte |"
    print "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for (s in P) {
        k = split(substr(mats[s], 2), ms, " ")
        for (i = 1; i <= k; i++) {
            m = ms[i]
            printf "| %s | %s | %s | %s | %s | %s | %.0f | %s | %s |\n", m, s, commas(pos[m]),
                commas(win[m]), commas(los[m]), commas(drw[m]), sec[m], commas(cb[m]),
                cb[m] ? sprintf("%.1f", pos[m] / cb[m]) : "-"
        }
    }
}' "$T/stats"
