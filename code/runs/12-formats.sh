# Tangled from chapters/99gp-precision-plumbing.nw; edit the chapter, not this file.
# usage: sh code/runs/12-formats.sh BUILD_DIR
set -eu
formats_tool="$1/bin/formats"
transcripts="$1/transcripts" numbers="$1/numbers"
$formats_tool --ranges --output "$transcripts/12-formats-ranges.txt"
$formats_tool --ranges --latex Formats --output "$numbers/12-formats.tex"
$formats_tool 0.1 3.14159265 1e-5 70000 --output \
    "$transcripts/12-formats-values.txt"
