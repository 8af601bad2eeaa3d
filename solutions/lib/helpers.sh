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
# figures and the unit, as the tools' --latex reports write it: 388\,ms. The
# function is the one the run scripts load (code/common/formats.awk).
duration() {
    awk -v x="$1" "$(cat code/common/formats.awk)"'
        BEGIN { print duration(x) }'
}

# sci X: a number as LaTeX writes it in the solutions, two figures and a
# power of ten, \ensuremath{9.3\times10^{-9}}, or 0.
sci() {
    awk -v x="$1" 'BEGIN { if (x == 0) { print 0; exit }
        e = int(log(x) / log(10)); if (x < 10 ^ e) e--
        printf "\\ensuremath{%.2g\\times10^{%d}}", x / 10 ^ e, e }'
}

# grouped NUMBER: a whole number with thousands separators, 12,345.
grouped() {
    echo "$1" | sed -e ':a' -e 's/^\([0-9]*[0-9]\)\([0-9]\{3\}\)/\1,\2/' -e 'ta'
}

# json FILE KEY: the value of KEY in a JSON report that the tools print one
# field to a line (a number, or a string without its quotes); a field inside
# an object is named by its path joined with _, as in the tools' CSV
# (step_breakdown_exposed_comm_s_tp). A missing key stops the script.
json() {
    v=$(awk -v key="$2" '
        { name = $1; gsub(/[":]/, "", name) }
        $NF == "{" { path[++depth] = $1 == "{" ? "" : name; next }
        /^ *}/ { depth--; next }
        $NF == "[" || /^ *]/ { next }
        {   for (i = depth; i >= 1; i--)
                if (path[i] != "") name = path[i] "_" name
            if (name == key) {
                sub(/^[^:]*: */, ""); sub(/,$/, ""); gsub(/"/, ""); print
            } }' "$1")
    test -n "$v" || { echo "$0: no $2 in $1" >&2; exit 1; }
    echo "$v"
}

# show FILE PROGRAM ARGS...: run PROGRAM with ARGS and write FILE as a
# reader sees it at a terminal: the command after a "$ " prompt (the
# program's name alone, wrapped at 72 columns with a backslash, a flag on
# the line of its value), then what
# it printed. The quote helpers below keep that command and cut what follows.
show() {
    f=$1 prog=$2
    shift 2
    "$prog" "$@" --output "$f.out"
    { echo "$(basename "$prog")" "$@" | awk '{
          line = "$"
          for (i = 1; i <= NF; i++) {
              word = $i             # a flag stays on the line of its value
              if (word ~ /^-/ && i < NF && $(i + 1) !~ /^-/)
                  word = word " " $(++i)
              if (length(line) + 1 + length(word) > 70) {
                  print line " \\"
                  line = "     "
              }
              line = line " " word
          }
          print line }'
      cat "$f.out"; } > "$f"
    rm -f "$f.out"
}

# The awk that every quote helper shares: the command at the head of a
# transcript ("$ " and the lines its backslashes continue) passes unchanged;
# the helper's own rules see only the lines after it.
quote_head='NR == 1 && /^\$ / { head = 1 }
    head { print; if (!/\\$/) head = 0; next }'

# quote FILE PATTERN: cut the transcript FILE, in place, to the paragraphs
# (runs of lines between blank lines) whose first line matches the extended
# regular expression PATTERN, so that a solution shows the part of a
# derivation it discusses and not the whole of it. A pattern that matches no
# paragraph stops the script.
quote() {
    awk -v re="$2" "$quote_head"'
        /^$/ { para = 0; next }
        !para { para = 1; keep = $0 ~ ("^(" re ")")
                if (keep && n++) print "" }
        keep { print }
        END { exit n == 0 }' "$1" > "$1.quoted" \
        || { echo "$0: no paragraph of $1 starts with $2" >&2;
             rm -f "$1.quoted"; exit 1; }
    mv "$1.quoted" "$1"
}

# quote_lines FILE PATTERN: cut FILE, in place, to its lines that match the
# extended regular expression PATTERN; none stops the script.
quote_lines() {
    awk -v re="$2" "$quote_head"'
        $0 ~ re { print; n++ }
        END { exit n == 0 }' "$1" > "$1.quoted" \
        || { echo "$0: no line of $1 matches $2" >&2;
             rm -f "$1.quoted"; exit 1; }
    mv "$1.quoted" "$1"
}

# quote_range FILE FIRST LAST: cut FILE, in place, to the lines from the first
# that matches FIRST to the next that matches LAST (both extended regular
# expressions), as sed -n '/FIRST/,/LAST/p' would; none stops the script.
quote_range() {
    awk -v first="$2" -v last="$3" "$quote_head"'
        !on && $0 ~ first { on = 1 }
        on { print; n++ }
        on && n > 1 && $0 ~ last { on = 0 }
        END { exit n == 0 }' "$1" > "$1.quoted" \
        || { echo "$0: no line of $1 matches $2" >&2;
             rm -f "$1.quoted"; exit 1; }
    mv "$1.quoted" "$1"
}
