#!/bin/sh
# first-start.sh OPENING STATE - what `make run` says before a proof's
# first start: what to expect on this machine, what `make demo` shows, and
# how to add workers on other machines. The figures are the frontier's
# (results/frontier.md, 1-6 piece databases, 60 s a position).
set -u
cat <<MSG
== first start of the proof of "$1" (state in $2)
   What to expect: the position after three moves has 24 pieces. The 2007 proof of checkers
   needed 10-piece databases and years of computing; this machine, with the 1-6 piece
   databases and 60 s a position, proves about half of the 8-piece positions on the openings'
   lines, a third at 10 pieces, a sixth at 12 and one in 19 at 14 (results/frontier.md). So the
   opening's root stays open for a long time; progress shows as leaves proven and the root's
   proof and disproof numbers. Ctrl-C stops it; \`make run\` again (or
   \`bin/checkers prove --state $2\`) resumes with nothing lost.
   \`make demo\` shows a whole proof in under a minute: a 14-piece position of opening 14
   through the same manager, workers, databases and checker.
   More workers: start the manager with
     make run PROVE_ARGS="--listen 0.0.0.0:7000 --token-file $2/token"
   and on each other machine (same databases, a copy of $2/token):
     bin/checkers worker --connect THIS-HOST:7000 --token-file token --db egdb-data
MSG
