#!/bin/bash
# tools/html/build.sh B: the HTML edition, B/html, woven by tex4ht from the
# same LaTeX as B/book.pdf: chapters/book.tex, the woven chapters
# (B/tex/chapters.tex) and the numbers and transcripts the runs wrote in B.
# The figures (B/html/figures/*.svg) are the Makefile's to draw.
#
# The LaTeX names its inputs build/...: it is run in B/html-tex, where
# build/ holds links to B's numbers and transcripts, the woven chapters, and
# for each figure a stub that places the figure's SVG on the page.
set -eo pipefail
B=$1
root=$PWD
H=$B/html-tex
OUT=$B/html
rm -rf "$H"
mkdir -p "$H/build/tex" "$H/build/figures" "$OUT/figures"
ln -s "$root/chapters" "$H/chapters"
ln -s "$root/exercises" "$H/exercises"
ln -s "$root/$B/numbers" "$H/build/numbers"
ln -s "$root/$B/transcripts" "$H/build/transcripts"
# tex4ht's MathML reads a subscript's argument as one token, so that
# N_\text{active} must be written N_{\text{active}}: the same mathematics.
braced() { sed -E 's/([_^])\\text\{([^{}]*)\}/\1{\\text{\2}}/g'; }
braced < chapters/book.tex > "$H/book.tex"
braced < "$B/tex/chapters.tex" > "$H/build/tex/chapters.tex"
for gp in figures/*.gp; do
  name=$(basename "$gp" .gp)
  printf '\\HCode{<img src="figures/%s.svg" alt="Figure %s" class="plot" />}\n' \
    "$name" "$name" > "$H/build/figures/$name.tex"
done
cp tools/html/book.cfg "$H/"
cd "$H"
# htlatex: three passes of latex (which settle the cross-references), then
# tex4ht and t4ht, which write the pages, their CSS and, through dvisvgm, an
# SVG for each TikZ picture. -cunihtf -utf8: the text as Unicode.
if ! htlatex book.tex book.cfg " -cunihtf -utf8" "" \
       "-interaction=nonstopmode -halt-on-error" > htlatex.out 2>&1; then
  tail -n 30 book.log >&2
  exit 1
fi
cd "$root"
rm -f "$OUT"/*.html "$OUT"/book*.svg
cp "$H"/*.html "$H"/book.css "$OUT/"
cp "$H"/book*x.svg "$OUT/" 2>/dev/null || true
cp tools/html/fleet.css "$OUT/"
perl tools/html/finish.pl "$OUT"/*.html
cp "$OUT/book.html" "$OUT/index.html"
