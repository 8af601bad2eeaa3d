# Tangled from chapters/95-parallel-plumbing.nw and chapters/99l-moe-layer-plumbing.nw; edit the chapters, not this file.
# usage: sh code/runs/14-moe-layer.sh BUILD_DIR
set -eu
bin="$1/bin" machine="$1/machine.json"
transcripts="$1/transcripts" numbers="$1/numbers" data="$1/data"
formats=$(cat code/common/formats.awk)
field() {        # the number at KEY (a path joined by _) in a JSON report
    awk -v key="$1" '
        { name = $1; gsub(/[":]/, "", name) }
        $2 == "{" { path[++depth] = name; next }
        /^ *}/    { depth--; next }
        {   for (i = depth; i >= 1; i--) name = path[i] "_" name
            if (name == key) { sub(/,$/, "", $2); print $2 } }' "$2"
}
cores=$(field cores "$machine" 2>/dev/null || true)
if [ "${cores:=$(nproc)}" -lt 2 ]; then
    echo "14-moe-layer.sh: two ranks need two cores; this machine has one" >&2
    exit 1
fi
layer="--experts 8 --top-k 2 --tokens 512 --hidden 64 --repeats 5"
skew=1 low=1 high=1.25
for router in balanced skewed; do
    bias=""
    [ $router = balanced ] || bias="--skew $skew"
    for factor in low high; do
        eval f=\$$factor
        out="$data/14-moe-layer-$router-$factor"
        mpiexec -bind-to core -n 2 "$bin/moe" $layer $bias \
                --capacity-factor "$f" --verify --backward --json \
                --output "$out.json" --tokens-csv "$out.csv"
        if ! grep -q '"result": "OK"' "$out.json"; then
            echo "14-moe-layer.sh: $router router at $f: --verify failed" >&2
            exit 1
        fi
    done
done
mpiexec -bind-to core -n 2 "$bin/moe" $layer --capacity-factor $high \
        --verify --backward --output "$transcripts/14-moe-layer.txt"
"$bin/moe" --gradcheck --experts 4 --tokens 16 --hidden 8 --skew $skew \
           --capacity-factor 0.75 --output "$transcripts/14-moe-gradcheck.txt"
awk -F, -v low=$low -v high=$high \
    -v b="$data/14-moe-layer-balanced-low.csv" \
    -v s="$data/14-moe-layer-skewed-low.csv" \
    -v h="$data/14-moe-layer-balanced-high.csv" 'BEGIN {
    print "expert,balanced,skewed,capacity_low,capacity_high,factor_low," \
          "factor_high"
    getline line < b; getline line < s; getline line < h
    while ((getline line < b) > 0) {
        split(line, x, ","); getline other < s; split(other, y, ",")
        getline third < h; split(third, z, ",")
        printf "%d,%d,%d,%d,%d,%g,%g\n", x[1], x[3], y[3], x[6], z[6], \
               low, high
    }
}' > "$data/14-experts.csv"
balanced_low="$data/14-moe-layer-balanced-low.json"
balanced_high="$data/14-moe-layer-balanced-high.json"
skewed_low="$data/14-moe-layer-skewed-low.json"
skewed_high="$data/14-moe-layer-skewed-high.json"
diff=0 grad=0
larger() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > a ? b : a) }'; }
for f in "$balanced_low" "$balanced_high" "$skewed_low" "$skewed_high"; do
    diff=$(larger "$diff" "$(field max_doutput "$f")")
    grad=$(larger "$grad" "$(field max_ddx "$f")")
    grad=$(larger "$grad" "$(field max_dgrad "$f")")
done
verdict='s/^gradcheck: \([0-9]*\) entries, \([0-9]*\) skipped.*'
verdict="$verdict"' = \([^:]*\): OK$/\1 \2 \3/p'
gradcheck=$(sed -n "$verdict" "$transcripts/14-moe-gradcheck.txt")
if [ -z "$gradcheck" ]; then
    echo "14-moe-layer.sh: --gradcheck failed" >&2
    exit 1
fi
awk -v ranks="$(field ranks "$balanced_high")" \
    -v experts="$(field experts "$balanced_high")" \
    -v per="$(field experts_per_rank "$balanced_high")" \
    -v k="$(field top_k "$balanced_high")" \
    -v tokens="$(field tokens_per_rank "$balanced_high")" \
    -v hidden="$(field hidden "$balanced_high")" \
    -v all="$(field tokens "$balanced_high")" \
    -v slots="$(field slots "$balanced_high")" \
    -v skew=$skew \
    -v low=$low \
    -v high=$high \
    -v cap_low="$(field capacity "$balanced_low")" \
    -v cap_high="$(field capacity "$balanced_high")" \
    -v bdl="$(field drop_fraction "$balanced_low")" \
    -v bdh="$(field drop_fraction "$balanced_high")" \
    -v sdl="$(field drop_fraction "$skewed_low")" \
    -v sdh="$(field drop_fraction "$skewed_high")" \
    -v bimb="$(field load_imbalance "$balanced_high")" \
    -v simb="$(field load_imbalance "$skewed_high")" \
    -v even="$(field alltoall_bytes_per_token_even "$balanced_high")" \
    -v bbytes="$(field alltoall_bytes_per_token "$balanced_high")" \
    -v sbytes="$(field alltoall_bytes_per_token "$skewed_high")" \
    -v router="$(field router_s "$balanced_high")" \
    -v dispatch="$(field dispatch_s "$balanced_high")" \
    -v experts_s="$(field experts_s "$balanced_high")" \
    -v combine="$(field combine_s "$balanced_high")" \
    -v diff="$diff" -v grad="$grad" -v gradcheck="$gradcheck" \
    -v backward="$(field backward_s "$balanced_high")" \
    -v atol="$(field atol "$balanced_high")" \
    -v rtol="$(field rtol "$balanced_high")" "$formats"'
    function macro(name, value) {
        printf "\\newcommand{\\MoeLayer%s}{%s}\n", name, value
    }
    function percent(x) { return sprintf("%.3g\\,\\%%", 100 * x) }
    function small(x,   e) {          # 7.6e-06 as $7.6\times10^{-6}$
        if (x == 0) return "0"
        e = int(log(x) / log(10)); if (10 ^ e > x) e--
        return sprintf("$%.2g\\times10^{%d}$", x / 10 ^ e, e)
    }
    BEGIN {
        macro("Ranks", ranks); macro("Experts", experts)
        macro("PerRank", per); macro("TopK", k)
        macro("Tokens", grouped(tokens)); macro("Hidden", hidden)
        macro("AllTokens", grouped(all)); macro("Slots", grouped(slots))
        macro("Skew", skew); macro("FactorLow", low)
        macro("FactorHigh", high)
        macro("CapacityLow", grouped(cap_low))
        macro("CapacityHigh", grouped(cap_high))
        macro("BalancedDropLow", percent(bdl))
        macro("BalancedDropHigh", percent(bdh))
        macro("SkewedDropLow", percent(sdl))
        macro("SkewedDropHigh", percent(sdh))
        macro("BalancedImbalance", sprintf("%.3g", bimb))
        macro("SkewedImbalance", sprintf("%.3g", simb))
        macro("VerifyDiff", small(diff))
        macro("VerifyGradDiff", small(grad))
        split(gradcheck, gc, " ")
        macro("GradcheckEntries", gc[1]); macro("GradcheckSkipped", gc[2])
        macro("GradcheckWorst", sprintf("%.2g", gc[3]))
        macro("BackwardTime", duration(backward))
        macro("VerifyAtol", sprintf("$10^{%d}$", log(atol) / log(10) - 0.5))
        macro("VerifyRtol", sprintf("$10^{%d}$", log(rtol) / log(10) - 0.5))
        macro("BytesUniform", sprintf("%.4g~B", even))
        macro("BytesBalanced", sprintf("%.4g~B", bbytes))
        macro("BytesSkewed", sprintf("%.4g~B", sbytes))
        macro("RouterTime", duration(router))
        macro("DispatchTime", duration(dispatch))
        macro("ExpertsTime", duration(experts_s))
        macro("CombineTime", duration(combine))
        s = bdh == 0 \
            ? "At " high " the balanced router'"'"'s busiest expert fits under " \
              "its capacity and nothing is dropped; at " low " the experts above " \
              "the mean drop " percent(bdl) " of the slots." \
            : bdh < bdl \
            ? "Raising the factor from " low " to " high " cuts the balanced " \
              "router'"'"'s drops from " percent(bdl) " to " percent(bdh) "." \
            : "The balanced router drops " percent(bdh) " of the slots even at " \
              high "."
        s = s " The skewed router'"'"'s busiest expert asks for " \
            sprintf("%.3g", simb) " times the mean, " \
            (simb > high \
             ? "more than either factor allows, so it drops " percent(sdh) \
               " even at " high "; a factor of " sprintf("%.3g", simb) \
               " would hold it, and would leave every other expert room for " \
               "that many slots, mostly idle." \
             : "which the factor of " high " holds.")
        macro("DropSentence", s)
        r = bbytes / even
        s = (r > 0.95 && r < 1.05 \
             ? "The balanced run is within " sprintf("%.2g", 100 * (r > 1 ? \
               r - 1 : 1 - r)) "\\,\\% of the arithmetic: its slots are spread " \
               "about evenly over the ranks." \
             : "The balanced run differs from the arithmetic by " \
               sprintf("%.2g", 100 * (r > 1 ? r - 1 : 1 - r)) "\\,\\%: its " \
               "slots are not spread evenly over the ranks.") \
            (sbytes < even \
             ? " The skewed run sends less: its dropped slots never travel, and " \
               "a rank'"'"'s slots for its own experts stay home." \
             : " The skewed run sends more: more of its slots go to the other " \
               "rank.")
        macro("BytesSentence", s)
        comm = dispatch + combine
        macro("TimeSentence", "The two all-to-alls together took " \
              (comm > experts_s ? "more" : "less") " of the layer'"'"'s time " \
              "than the experts'"'"' arithmetic did.")
    }' > "$numbers/14-moe-layer.tex"
