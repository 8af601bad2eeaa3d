# solutions/lib/helpers.sh: shell helpers the solution scripts share.
# Sourced, not run: . "$(dirname "$0")/lib/helpers.sh"

# build_dirs BUILD_DIR: make BUILD_DIR/solutions, and set $bin and $out to
# the absolute paths of BUILD_DIR/bin and BUILD_DIR/solutions.
build_dirs() {
    mkdir -p "$1/solutions"
    bin=$(cd "$1/bin" && pwd)
    out=$(cd "$1/solutions" && pwd)
}

# macro NAME VALUE: one \newcommand line on standard output.
macro() {
    printf '\\newcommand{\\%s}{%s}\n' "$1" "$2"
}

# calc FORMAT EXPRESSION: evaluate an awk expression, print it with printf's
# FORMAT. Values are passed in as shell text, which awk reads as numbers.
calc() {
    awk "BEGIN { printf \"$1\", $2 }"
}

# duration SECONDS: a time in the unit a person reads it, three significant
# figures and the unit, as the tools' --latex reports write it: 388\,ms.
duration() {
    awk -v x="$1" 'BEGIN {
        if (x == 0) { print "0\\,s"; exit }
        if (x < 1e-3)        { v = x * 1e6; u = "\\ensuremath{\\mu}s" }
        else if (x < 1)      { v = x * 1e3; u = "ms" }
        else if (x < 600)    { v = x; u = "s" }
        else if (x < 7200)   { v = x / 60; u = "min" }
        else if (x < 172800) { v = x / 3600; u = "h" }
        else                 { v = x / 86400; u = "days" }
        w = sprintf("%.3g", v)
        if (w ~ /e/) w = sprintf("%.0f", v)
        print w "\\," u }'
}

# grouped NUMBER: a whole number with thousands separators, 12,345.
grouped() {
    echo "$1" | sed -e ':a' -e 's/^\([0-9]*[0-9]\)\([0-9]\{3\}\)/\1,\2/' -e 'ta'
}

# json FILE KEY: the value of KEY in a JSON report that the tools print one
# field to a line (a number, or a string without its quotes); a missing key
# stops the script.
json() {
    v=$(sed -n "s/^ *\"$2\": *\"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$1")
    test -n "$v" || { echo "$0: no $2 in $1" >&2; exit 1; }
    echo "$v"
}

# quote FILE PATTERN: cut the transcript FILE, in place, to the paragraphs
# (runs of lines between blank lines) whose first line matches the extended
# regular expression PATTERN, so that a solution shows the part of a
# derivation it discusses and not the whole of it. A pattern that matches no
# paragraph stops the script.
quote() {
    awk -v re="$2" 'BEGIN { RS = "" }
        $0 ~ ("^(" re ")") { printf "%s%s\n", n++ ? "\n" : "", $0 }
        END { exit n == 0 }' "$1" > "$1.quoted" \
        || { echo "$0: no paragraph of $1 starts with $2" >&2;
             rm -f "$1.quoted"; exit 1; }
    mv "$1.quoted" "$1"
}

# quote_lines FILE PATTERN: cut FILE, in place, to its lines that match the
# extended regular expression PATTERN; none stops the script.
quote_lines() {
    grep -E "$2" "$1" > "$1.quoted" \
        || { echo "$0: no line of $1 matches $2" >&2;
             rm -f "$1.quoted"; exit 1; }
    mv "$1.quoted" "$1"
}
