# Tangled from chapters/99i-shards-plumbing.nw; edit the chapter, not this file.
# usage: sh code/runs/13-shards.sh BUILD_DIR
set -eu
build=$(cd "$1" && pwd)     # whole, since the refusals run in another
bin="$build/bin"
fleet="$bin/fleet"
minigpt="$bin/minigpt --machine $build/machine.json"
transcripts="$build/transcripts" numbers="$build/numbers" data="$build/data"
formats=$(cat code/common/formats.awk)
gpus=16384 params=405e9
restart=$($fleet memory --precisions --csv \
          | awk -F, '$1 == "mixed" { print $5 + $7 }')
nic=$($fleet step --gpu h100 --csv | awk -F, 'NR == 1 { for (i = 1; i <= NF;
    i++) c[$i] = i } NR == 2 { print $c["nic_line_rate"] }')
test -n "$restart" && test -n "$nic" || {
    echo "13-shards.sh: no restart bytes or NIC rate" >&2; exit 1; }
price() {        # price PREFIX PARAMS: one writer's checkpoint, at one NIC
    $fleet memory --params "$2" --gpu h100 --gpus $gpus \
        --checkpoint-bytes-per-param "$restart" --checkpoint-bandwidth "$nic" \
        --latex "$1" --output "$numbers/13-$1.tex"
    $fleet memory --params "$2" --gpu h100 --gpus $gpus \
        --checkpoint-bytes-per-param "$restart" --checkpoint-bandwidth "$nic" \
        --json --output "$data/13-$1.json"
}
price ShardsOne $params
price ShardsEach "$(awk -v p=$params -v g=$gpus 'BEGIN { print p / g }')"
awk -v nic="$nic" "$formats"'
{ gsub(/[",:]/, ""); v[$1] = $2 }
END {
    bytes = v["checkpoint_bytes"]; one = v["checkpoint_seconds"]
    if (bytes <= 0 || one <= 0 || v["gpus"] <= 0) {
        print "13-shards.sh: no checkpoint in the report" > "/dev/stderr"
        exit 1
    }
    printf "\\newcommand{\\ShardsGpuMemories}{%s}\n",
           grouped(bytes / v["gpu_memory_bytes"])
    printf "\\newcommand{\\ShardsIdleGpuHours}{%s}\n",
           grouped(one * v["gpus"] / 3600)
    printf "\\newcommand{\\ShardsNicGBs}{%s}\n", grouped(nic / 1e9)
    printf "\\newcommand{\\ShardsAllNicsTBs}{%s}\n",
           grouped(nic * v["gpus"] / 1e12)
}' "$data/13-ShardsOne.json" > "$numbers/13-shards.tex"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tiny="--layers 2 --hidden 16 --heads 2 --seq 8 --vocab 16 --batch 4
      --steps 4 --eval-every 1000 --quiet"
zero3="--dp 2 --zero 3"
every=2                                 # saves at steps 2 and 4
resume="ckpt.step$(printf %06d $every)"  # the first, resumed below
mpiexec -n 2 $minigpt $tiny $zero3 --save-every $every --keep-checkpoints 2 \
        --save "$dir/ckpt" --log "$dir/straight.csv" > /dev/null
{ echo '$ ls ckpt'; ls "$dir/ckpt"; echo '$ cat ckpt/manifest'
  cat "$dir/ckpt/manifest"; } > "$transcripts/13-manifest.txt"
: > "$transcripts/13-refusals.txt"
refuse() {       # refuse LABEL COMMAND: a broken copy, resumed, refused
    rm -rf "$dir/bad"
    cp -r "$dir/ckpt" "$dir/bad"
    (cd "$dir" && eval "$2")
    printf '%s\n' "$1" >> "$transcripts/13-refusals.txt"
    status=0
    (cd "$dir" && mpiexec -n 2 $minigpt $tiny $zero3 --resume bad \
        > /dev/null 2> refused.err) || status=$?
    if [ $status -ne 2 ] || [ "$(wc -l < "$dir/refused.err")" -ne 1 ] \
       || ! grep -q '^minigpt: --resume: ' "$dir/refused.err"; then
        echo "13-shards.sh: $1 was not refused with one line" >&2; exit 1
    fi
    fold -s -w 74 "$dir/refused.err" | sed 's/^/  /' \
        >> "$transcripts/13-refusals.txt"
}
refuse "rank 1's shard removed:" 'rm bad/rank00001.shard'
refuse "rank 1's shard 8 bytes short:" 'truncate -s -8 bad/rank00001.shard'
refuse "rank 0's shard from the checkpoint of step $every:" \
       "cp $resume/rank00000.shard bad/"
cp -r "$dir/ckpt" "$dir/before"
status=0
mpiexec -n 2 $minigpt $tiny $zero3 --resume "$dir/$resume" \
        --save "$dir/ckpt" --fail-shard-write 1 > /dev/null \
        2> "$dir/drill.err" || status=$?
if [ $status -ne 2 ] || ! grep -q '^minigpt: --save: ' "$dir/drill.err"; then
    echo "13-shards.sh: the drill's save did not fail as it should" >&2
    exit 1
fi
untouched=$(diff -r "$dir/before" "$dir/ckpt" > /dev/null && echo untouched \
            || echo changed)
left=$(ls "$dir" | grep -c tmp || true)
{ sed "s|$dir/||g" "$dir/drill.err" | fold -s -w 76
  printf 'the checkpoint: %s; temporary directories left: %s\n' \
         "$untouched" "$left"; } > "$transcripts/13-drill.txt"
mpiexec -n 2 $minigpt $tiny $zero3 --resume "$dir/$resume" \
        --save "$dir/same" > /dev/null
same=$(diff -r "$dir/same" "$dir/ckpt" > /dev/null && echo identical \
       || echo different)
loss4() { awk -F, '$1 == 4 { print $3 }' "$1"; }
straight=$(loss4 "$dir/straight.csv")
{ printf '%-24s step 4 loss %s\n' 'uninterrupted, --dp 2:' "$straight"
  for layout in "1" "2 --tp 2" "2 --pp 2"; do
      n=${layout%% *} flags=${layout#1}
      test "$n" = 2 && flags=${layout#2 }
      rm -f "$dir/r.csv"
      mpiexec -n $n $minigpt $tiny $flags \
              --resume "$dir/$resume" --log "$dir/r.csv" > /dev/null
      printf '%-24s step 4 loss %s\n' "resumed, ${flags:-one process}:" \
             "$(loss4 "$dir/r.csv")"
  done; } > "$transcripts/13-reshard.txt"
awk -v same="$same" -v untouched="$untouched" -v every=$every '
    NR == 1 { want = $NF } NR > 1 { d = $NF - want; if (d < 0) d = -d
                                    if (d > most) most = d }
    END { printf "\\newcommand{\\ShardsResumeStep}{%d}\n", every
          printf "\\newcommand{\\ShardsSameLayout}{%s}\n", same
          printf "\\newcommand{\\ShardsDrill}{%s}\n", untouched
          e = most > 0 ? int(log(most) / log(10) - (most < 1)) : 0
          printf "\\newcommand{\\ShardsReshardDiff}{\\ensuremath{%.1f" \
                 "\\times10^{%d}}}\n", most / 10 ^ e, e }' \
    "$transcripts/13-reshard.txt" >> "$numbers/13-shards.tex"
