#!/usr/bin/perl
# tests/04-activations.t: chapter 4's formulas, fleet activations,
# against arithmetic done here from Korthikanti et al.'s list of saved
# tensors, the schedules' warm-up counts and ZeRO's per-device bytes; the
# running example's numbers; unequal stages; bad input; and the chapter's
# pages in the book.
#
# The model below (layer_bytes, in_flight, stage_layers, gpu_memory) is also
# what tests/04-solutions.t checks the worked solutions with: it
# loads this file, which then defines the subroutines and runs no tests.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use List::Util qw(max min sum);
use POSIX qw(ceil);
use Test::More;

# ------------------------------------------------------------ the model ----
# Bytes one layer keeps, tensor by tensor, in units of sbh (16-bit numbers
# are 2 bytes, dropout masks 1): those tensor parallelism leaves whole, those
# it splits, and the scores (per as^2 b), which it splits by heads.
my @whole = (2, 2, 1, 2, 2, 1);   # LN1 in, QKV in, attn mask, LN2 in, fc1 in, mlp mask
my @split = (4, 2, 2, 8, 8);      # Q and K, V, proj in, GELU in, GELU out
my @scores = (2, 1, 2);           # softmax out, its mask, dropped-out scores

# %a: s, b, h, a, t, sp (0/1), rc (none/selective/full), cp, at (flash, the
# default, or materialized): a fused attention kernel never writes the scores.
sub layer_bytes {
    my (%a) = @_;
    my $cp = $a{cp} // 1;
    my $sbh = $a{s} / $cp * $a{b} * $a{h};
    my $t = $a{t};
    return $sbh * 2 / ($a{sp} ? $t : 1) if $a{rc} eq 'full';
    my $bytes = $sbh * (sum(@whole) / ($a{sp} ? $t : 1) + sum(@split) / $t);
    # a s^2 b / cp scores per GPU, split over the t groups of heads
    $bytes += sum(@scores) * $a{a} * $a{s} * $a{s} / $cp * $a{b} / $t
        if $a{rc} eq 'none' && ($a{at} // 'flash') eq 'materialized';
    return $bytes;
}

# Micro-batches stage r holds at its peak, in units of its layers.
sub in_flight {
    my ($schedule, $p, $m, $v, $r) = @_;
    return min(1, $m) if $p <= 1;
    return $m if $schedule eq 'gpipe';
    return min($p - $r, $m) if $schedule eq '1f1b';
    my $warmup = ($p - $r - 1) * 2 + ($v - 1) * $p;   # Megatron-LM's
    return min($warmup + 1, $m * $v) / $v;
}

# Layers per stage: ceil(L/p) each, and the stages nearest the ends, taken
# in the order 0, p-1, 1, p-2, ..., give one back until the sum is L.
sub stage_layers {
    my ($L, $p) = @_;
    my @layers = (ceil($L / $p)) x $p;
    my @order = map { $_ % 2 ? $p - 1 - ($_ - 1) / 2 : $_ / 2 } 0 .. $p - 1;
    my $excess = sum(@layers) - $L;
    $layers[ $order[$_] ]-- for 0 .. $excess - 1;
    return @layers;
}

sub params_per_layer {
    my (%l) = @_;
    my $h = $l{hidden};
    my $h_kv = $h * ($l{kv_heads} // $l{heads}) / $l{heads};
    my $ffn = $l{ffn} // 4 * $h;
    return $h * $h + $h * $h_kv * 2 + $h * $h + ($l{gated} ? 3 : 2) * $h * $ffn;
}

# ZeRO's bytes per device for psi parameters over n ranks (mixed precision).
sub zero_bytes {
    my ($stage, $psi, $n) = @_;
    return (16 * $psi, 4 * $psi + 12 * $psi / $n, 2 * $psi + 14 * $psi / $n,
            16 * $psi / $n)[$stage];
}

# The defaults of fleet activations, as the chapter states them.
my %DEFAULT = (hidden => 12288, heads => 96, seq => 4096, micro_batch => 4,
               vocab => 50304, tp => 1, cp => 1, pp => 1, dp => 1, zero => 0,
               sp => 0, rc => 'none', schedule => '1f1b', chunks => 1,
               micro_batches => 1, memory => 80e9, context => 1e9,
               library => 0.5e9, fragmentation => 0.1);

# What each GPU of stage r holds, by kind.
sub stage_memory {
    my ($l, $r) = @_;
    my ($p, $t, $cp) = @$l{qw(pp tp cp)};
    my $layers = (stage_layers($l->{layers}, $p))[$r];
    my $per = params_per_layer(%$l);
    my $vh = $l->{vocab} * $l->{hidden};
    # The model's stated size, when there is one, scales the shape's counts.
    my $scale = $l->{params} ? $l->{params} / ($l->{layers} * $per + 2 * $vh) : 1;
    ($per, $vh) = ($per * $scale, $vh * $scale);
    my $params = ($layers * $per + ($r == 0 ? $vh : 0)
                  + ($r == $p - 1 ? $vh : 0)) / $t;
    my %shape = (s => $l->{seq}, b => $l->{micro_batch}, h => $l->{hidden},
                 a => $l->{heads}, t => $t, sp => $l->{sp}, cp => $cp,
                 at => $l->{at} // 'flash');
    my $kept = layer_bytes(%shape, rc => $l->{rc});
    my $whole = layer_bytes(%shape, rc => 'none');
    my $flight = in_flight($l->{schedule}, $p, $l->{micro_batches},
                           $l->{chunks}, $r);
    my %g;
    $g{layers} = $layers;
    $g{in_flight} = $flight;
    $g{state} = zero_bytes($l->{zero}, $params, $l->{dp} * $cp);
    $g{stored} = $kept * $layers * $flight;
    $g{activations} = $g{stored} + $whole - $kept;
    $g{gathered} = $l->{zero} == 3 ? 2 * $per * 2 / $t : 0;
    # fp32 logits (and one gradient) on the last stage: one micro-batch's
    # under 1F1B, every micro-batch's under GPipe, whose losses all run
    # before the first backward pass.
    my $copies = $p > 1 && $l->{schedule} eq 'gpipe' ? $l->{micro_batches} + 1 : 2;
    $g{logits} = $r == $p - 1
        ? $copies * 4 * $l->{micro_batch} * $l->{seq} / $cp * $l->{vocab} / $t : 0;
    $g{buffers} = $l->{library} + ($l->{zero} >= 2 ? $per * 2 / $t : 0);
    $g{context} = $l->{context};
    my $held = sum(@g{qw(state activations gathered logits buffers)});
    $g{fragmentation} = $l->{fragmentation} * $held;
    $g{total} = $held + $g{fragmentation} + $g{context};
    return \%g;
}

# The layout with defaults filled in, and its heaviest GPU (the first of
# equals) with the stage it is on.
sub layout {
    my (%l) = (%DEFAULT, @_);
    if (!defined $l{layers}) {
        $l{params} //= 100e9;
        $l{layers} = sprintf('%.0f', $l{params} / params_per_layer(%l));
    }
    return \%l;
}
sub gpu_memory {
    my ($l) = @_;
    my ($best, $stage);
    for my $r (0 .. $l->{pp} - 1) {
        my $g = stage_memory($l, $r);
        ($best, $stage) = ($g, $r) if !$best || $g->{total} > $best->{total};
    }
    return ($best, $stage);
}

# The flags of fleet activations for a layout given as this file's keys.
sub flags {
    my (%in) = @_;
    my %name = (hidden => '--hidden', heads => '--heads', seq => '--seq',
                micro_batch => '--micro-batch', vocab => '--vocab',
                tp => '--tp', cp => '--cp', pp => '--pp', dp => '--dp',
                zero => '--zero', rc => '--recompute', at => '--attention',
                schedule => '--schedule', chunks => '--chunks',
                micro_batches => '--micro-batches', layers => '--layers',
                params => '--params', kv_heads => '--kv-heads',
                ffn => '--ffn');
    my @f;
    for my $k (sort keys %in) {
        if ($k eq 'sp') { push @f, '--sequence-parallel' if $in{$k}; next }
        if ($k eq 'gated') { push @f, '--gated' if $in{$k}; next }
        push @f, $name{$k} // die("no flag for $k"), $in{$k};
    }
    return @f;
}

return 1 if caller;

# ------------------------------------------------------------- the tests ----
my $fleet = root() . '/build/bin/fleet';
ok(-x $fleet, 'build/bin/fleet exists') or BAIL_OUT('run make first');

# Korthikanti's six formulas (and 34 sbh), over a grid of shapes.
for my $h (6144, 12288) {
  for my $a (32, 96) {
    for my $s (2048, 8192) {
      for my $b (1, 4) {
        for my $t (1, 2, 8) {
          my $j = fleet_json('activations', '--hidden', $h, '--heads', $a,
                             '--seq', $s, '--micro-batch', $b, '--tp', $t);
          my $sbh = $s * $b * $h;
          my $q = 5 * $a * $s / $h;
          my %want = (
            bytes_per_layer_none => $sbh * (34 + $q),
            bytes_per_layer_without_scores => 34 * $sbh,
            bytes_per_layer_tp => $sbh * (10 + 24 / $t + $q / $t),
            bytes_per_layer_tp_sp => $sbh * (34 / $t + $q / $t),
            bytes_per_layer_tp_selective => $sbh * (10 + 24 / $t),
            bytes_per_layer_tp_sp_selective => $sbh * 34 / $t,
            bytes_per_layer_full => 2 * $sbh,
          );
          for my $k (sort keys %want) {
            close_to($j->{$k}, $want{$k}, 1e-12, "h $h a $a s $s b $b t $t: $k");
          }
          # The item list gives the same as the closed forms.
          my %shape = (s => $s, b => $b, h => $h, a => $a, t => $t);
          close_to(layer_bytes(%shape, sp => 1, rc => 'none', at => 'materialized'),
                   $want{bytes_per_layer_tp_sp}, 1e-12,
                   "h $h a $a s $s b $b t $t: the tensors add up to 34/t + 5as/(ht)");
        }
      }
    }
  }
}

# Context parallelism: s/cp of the tokens, scores against all s keys.
{
    my $j = fleet_json(qw(activations --cp 4 --tp 8 --sequence-parallel
                          --attention materialized));
    close_to($j->{bytes_per_layer}, layer_bytes(s => 4096, b => 4, h => 12288,
             a => 96, t => 8, sp => 1, rc => 'none', cp => 4,
             at => 'materialized'), 1e-12,
             'context parallel of 4: a quarter of the tokens');
    my $jf = fleet_json(qw(activations --cp 4 --tp 8 --sequence-parallel));
    close_to($jf->{bytes_per_layer}, 34 / 8 * 4096 / 4 * 4 * 12288, 1e-12,
             '... and with a fused kernel no scores at all: 34/t sbh/cp');
}
# A fused kernel: no scores stored, none while a layer is recomputed, so
# selective recomputation is the same as none; materialised scores are the
# 5as/h of the table, kept per layer or held for the layer recomputed.
{
    my %a = (tp => 8, sp => 1, dp => 128, zero => 3);
    my $fn = fleet_json('activations', flags(%a, rc => 'none'));
    my $fs = fleet_json('activations', flags(%a, rc => 'selective'));
    my $mn = fleet_json('activations', flags(%a, rc => 'none', at => 'materialized'));
    my $ms = fleet_json('activations', flags(%a, rc => 'selective', at => 'materialized'));
    my $sbh = 16384 * 12288;
    close_to($fn->{bytes_per_layer}, 34 / 8 * $sbh, 1e-12, 'flash, none: 34/t sbh');
    is($fs->{recomputing_bytes}, 0, 'flash, selective: nothing held for the layer recomputed');
    close_to($fs->{bytes_per_gpu}, $fn->{bytes_per_gpu}, 1e-12,
             'flash: selective recomputation holds what none holds');
    close_to($mn->{bytes_per_layer}, (34 + 5 * 96 * 4096 / 12288) / 8 * $sbh, 1e-12,
             'materialized, none: (34 + 5as/h)/t sbh');
    close_to($ms->{recomputing_bytes}, 5 * 96 * 4096 / 12288 / 8 * $sbh, 1e-12,
             'materialized, selective: one layer\'s scores, 5as/(ht) sbh, while recomputed');
    close_to($ms->{recomputing_bytes}, 4.03e9, 0.002, '... 4.03 GB for design A');
    is($fn->{attention}, 'flash', 'flash attention is the default');
}

# The running example's numbers.
my $design_a = { tp => 8, sp => 1, dp => 128, zero => 3 };
my $design_b = { tp => 8, sp => 1, pp => 8, micro_batches => 32,
                 micro_batch => 1, dp => 16, zero => 1 };
my $ja = fleet_json('activations', flags(%$design_a, rc => 'selective'));
is($ja->{layers}, 55, '100e9 at hidden 12,288 is 55 layers');
close_to($ja->{state_bytes}, 100e9 * 16 / (8 * 128), 1e-12,
         'design A: 100e9 x 16 B over TP8 x FSDP128, the 1.6 GB per GPU');
my $jl = fleet_json(qw(activations --layers 55 --tp 8 --dp 128 --zero 3));
close_to($jl->{state_bytes}, (55 * 12 * 12288**2 + 2 * 50304 * 12288) * 16 / 1024,
         1e-12, '--layers alone: the state of the shape\'s count');
my $jboth = fleet_json(qw(activations --layers 55 --params 120e9 --tp 8 --dp 128 --zero 3));
close_to($jboth->{state_bytes}, 120e9 * 16 / 1024, 1e-12,
         '--layers and --params: the state of the stated size');
close_to($ja->{bytes_per_layer_without_scores}, 34 * 16384 * 12288, 1e-12,
         '34 sbh at 16,384 tokens x 12,288');
close_to($ja->{bytes_per_layer_without_scores}, 6.85e9, 0.001, '... is 6.85 GB');
my $j16 = fleet_json(qw(activations --seq 4000));
close_to($j16->{bytes_per_layer_without_scores}, 6.7e9, 0.01,
         '16,000 tokens give the 6.7 GB in circulation');
close_to($ja->{stored_activation_bytes}, 47e9, 0.005,
         'TP8 + SP + selective, 55 layers, 16,384 tokens: about 47 GB');
my $j100 = fleet_json(qw(activations --layers 100 --tp 8 --sequence-parallel
                         --recompute selective));
close_to($j100->{stored_activation_bytes}, 86e9, 0.006, '... 100 layers: about 86 GB');
close_to($j100->{layer_params}, 180e9, 0.01, '... and 180B parameters');

# gpu_memory against the model, for the designs and variations of them.
my @layouts = (
    map({ my $rc = $_; ({ %$design_a, rc => $rc }, { %$design_b, rc => $rc }) }
        qw(none selective full)),
    map({ my $rc = $_; ({ %$design_a, rc => $rc, at => 'materialized' },
                        { %$design_b, rc => $rc, at => 'materialized' }) }
        qw(none selective full)),
    { %$design_b, rc => 'selective', schedule => 'gpipe' },
    { %$design_b, rc => 'selective', schedule => 'interleaved', chunks => 2 },
    { %$design_b, rc => 'selective', schedule => 'interleaved', chunks => 4 },
    { %$design_b, rc => 'none', zero => 2, cp => 2 },
    { %$design_b, rc => 'selective', zero => 0, layers => 64 },
    { %$design_a, rc => 'selective', micro_batch => 1, seq => 32768, cp => 8 },
    { hidden => 16384, heads => 128, kv_heads => 8, ffn => 53248, gated => 1,
      seq => 8192, micro_batch => 1, vocab => 128000, layers => 126, tp => 8,
      sp => 1, rc => 'selective', pp => 16, micro_batches => 16, dp => 128,
      zero => 1 },
    { hidden => 16384, heads => 128, kv_heads => 8, ffn => 53248, gated => 1,
      seq => 131072, micro_batch => 1, vocab => 128000, layers => 126, tp => 8,
      cp => 16, sp => 1, rc => 'none', pp => 16, micro_batches => 16, dp => 8,
      zero => 1 },
);
for my $in (@layouts) {
    my $label = join ' ', flags(%$in);
    my $j = fleet_json('activations', flags(%$in));
    my ($g, $stage) = gpu_memory(layout(%$in));
    close_to($j->{bytes_per_gpu}, $g->{total}, 1e-9, "$label: bytes per GPU");
    is($j->{heaviest_stage}, $stage, "$label: the heaviest stage is $stage");
    for my $k (qw(state activations gathered logits buffers context
                  fragmentation)) {
        my $key = $k eq 'buffers' ? 'buffer_bytes' : $k eq 'activations'
                ? 'activation_bytes' : "${k}_bytes";
        close_to($j->{$key} + 1, $g->{$k} + 1, 1e-9, "$label: $key");
    }
    is($j->{fits}, $g->{total} <= 80e9 ? 1 : 0, "$label: fits or not");
}

# The chapter's claims about the two designs.
my %total;
for my $rc (qw(none selective full)) {
    for my $d ([A => $design_a], [B => $design_b]) {
        $total{"$d->[0] $rc"} =
            fleet_json('activations', flags(%{ $d->[1] }, rc => $rc))->{bytes_per_gpu};
    }
}
for my $rc (qw(none selective)) {
    for my $d ([A => $design_a], [B => $design_b]) {
        $total{"$d->[0] mat $rc"} =
            fleet_json('activations', flags(%{ $d->[1] }, rc => $rc,
                                            at => 'materialized'))->{bytes_per_gpu};
    }
}
ok($total{'A mat none'} > 80e9,
   'design A with materialised scores does not fit without recomputation');
ok($total{'A mat selective'} <= 80e9, '... and fits with selective recomputation');
ok($total{'A none'} <= 80e9, 'design A with a fused kernel fits without recomputation');
is($total{'A none'}, $total{'A selective'}, '... and selective changes nothing');
ok($total{'B mat none'} <= 80e9, 'design B fits even with materialised scores and no recomputation');
ok($total{'B mat none'} > 70e9, '... close to the edge');
my $jb = fleet_json('activations', flags(%$design_b, rc => 'selective'));
is($jb->{heaviest_stage}, 1, "design B: the second stage is the heaviest (6 + 7 x 7 layers)");
ok($jb->{peak_activation_bytes_gpipe} > 40e9, 'design B under GPipe keeps over 40 GB');
{
    my $jg = fleet_json('activations', flags(%$design_b, rc => 'selective',
                                              schedule => 'gpipe'));
    is($jg->{heaviest_stage}, 7, 'design B under GPipe: the last stage is the heaviest');
    close_to($jg->{logits_bytes}, 33 * 4 * 4096 * 50304 / 8, 1e-12,
             '... keeping the fp32 logits of all 32 micro-batches and one gradient');
}
ok($jb->{peak_activation_bytes_interleaved} > $jb->{peak_activation_bytes_1f1b},
   'interleaving keeps more than 1F1B');

# The heaviest stage is the first under 1F1B when the stages are equal.
my $je = fleet_json('activations', flags(%$design_b, rc => 'selective', layers => 64));
is($je->{heaviest_stage}, 0, 'equal stages: the first is the heaviest under 1F1B');
is($je->{most_activations_stage}, 0, '... and keeps the most activations');
close_to($je->{micro_batches_in_flight}, 8, 1e-12, '... with p = 8 micro-batches in flight');

# Unequal stages and micro-batches in flight, read from the stage table.
sub stage_table {
    my (@flags) = @_;
    my ($status, $text) = run($fleet, 'activations', @flags);
    is($status, 0, "fleet activations @flags runs");
    return [ map { [ (split ' ', $_)[0 .. 2] ] }
             $text =~ /^ +(\d+ +\d+ +[\d.]+) +[\d.]+ [kMGT]?B +[\d.]+ [kMGT]?B$/mg ];
}
my $llama = stage_table(qw(--layers 126 --pp 16 --micro-batches 16 --tp 8));
is_deeply([map { $_->[1] } @$llama], [7, (8) x 14, 7], '126 layers on 16 stages: 7, 8 x 14, 7');
is_deeply([map { $_->[1] } @$llama], [stage_layers(126, 16)], '... as the model deals them');
is_deeply([map { $_->[2] } @$llama], [map { 16 - $_ } 0 .. 15], '1F1B: p - r in flight');
my $gp = stage_table(qw(--pp 8 --micro-batches 32 --schedule gpipe));
is_deeply([map { $_->[2] } @$gp], [(32) x 8], 'GPipe: m in flight on every stage');
my $il = stage_table(qw(--pp 8 --micro-batches 32 --schedule interleaved --chunks 2));
close_to($il->[0][2], 8 * (1 + 7 / (8 * 2)), 1e-12,
         'interleaved, V = 2: the first stage holds p(1 + (p-1)/(pV))');
is_deeply([map { $_->[2] } @$il], [map { in_flight('interleaved', 8, 32, 2, $_) } 0 .. 7],
          '... and every stage its warm-up + 1 chunks');
my $few = stage_table(qw(--pp 4 --micro-batches 6 --schedule interleaved --chunks 4));
is_deeply([map { $_->[2] } @$few], [map { in_flight('interleaved', 4, 6, 4, $_) } 0 .. 3],
          'interleaved with few micro-batches: at most all of them');

# The sweep behind the figure.
{
    my ($status, $csv) = run($fleet, qw(activations --tp 8 --sequence-parallel
                                        --micro-batch 1 --sweep));
    my ($head, @rows) = split /\n/, $csv;
    is($head, 'seq,none,selective,full', 'the sweep header');
    for my $row (@rows[0, -1]) {
        my ($s, @v) = split /,/, $row;
        my %shape = (s => $s, b => 1, h => 12288, a => 96, t => 8, sp => 1);
        close_to($v[$_], layer_bytes(%shape, rc => (qw(none selective full))[$_]),
                 1e-12, "sweep at $s tokens, column $_") for 0 .. 2;
    }
}

# Bad input: one line naming the flag, exit 2, no output file.
my @bad = (
    ['--tp', qw(--tp 5)],
    ['--heads', qw(--heads 7 --tp 1)],
    ['--schedule', qw(--schedule zigzag)],
    ['--recompute', qw(--recompute some)],
    ['--attention', qw(--attention tiled)],
    ['--zero', qw(--zero 4)],
    ['--chunks', qw(--chunks 2)],
    ['--chunks', qw(--chunks 2 --pp 4 --micro-batches 8 --schedule 1f1b)],
    ['--chunks', qw(--chunks 1 --pp 4 --micro-batches 8 --schedule interleaved)],
    ['--micro-batches', qw(--pp 8 --micro-batches 4)],
    ['--micro-batches', qw(--pp 8 --micro-batches 4 --schedule interleaved)],
    ['--kv-heads', qw(--kv-heads 5)],
    ['--kv-heads', qw(--kv-heads 4 --tp 8)],
    ['--cp', qw(--cp 3)],
    ['--pp', qw(--layers 4 --pp 8 --micro-batches 8)],
    ['--gpu', qw(--gpu v100)],
    ['--sweep', qw(--sweep --json)],
);
for my $flag (qw(--hidden --heads --seq --micro-batch --tp --pp --dp --cp
                 --layers --micro-batches --params --fragmentation)) {
    push @bad, map { [$flag, $flag, $_] } '0', '-3', 'abc', '1e30';
}
for my $case (@bad) {
    my ($flag, @args) = @$case;
    refused_no_output("@args", qr/^fleet activations: .*\Q$flag\E/,
                      $fleet, 'activations', @args);
}
my (undef, undef, $ok_err) = run($fleet, qw(activations --pp 8 --micro-batches 4
                                            --schedule gpipe));
is($ok_err, '', 'GPipe takes fewer micro-batches than stages');

# ---------------------------------------------------------------- the book --
my $book = root() . '/build/book.pdf';
ok(-s $book, 'build/book.pdf exists');
(my $flat = pdf_text($book)) =~ s/\s+/ /g;
my ($chapter) = $flat =~ /(Chapter 4 Activation memory.*?)(?=Chapter 5 [A-Z])/;
ok(defined $chapter, 'the book has chapter 4') or $chapter = '';
for my $line ('TP + SP + selective 34/t = 4.25 × sbh = 856 MB',
              'no parallelism, selective 34 = 34 × sbh = 6.85 GB',
              'this run, flash attention: 856 MB per layer',
              'total = 57.4 GB of 80 GB: fits') {
    ok(index($chapter, $line) >= 0, "the chapter prints: $line");
}
like($chapter, qr/47\.1 GB/, 'the 47 GB is in the text');
like($chapter, qr/85\.6 GB/, 'the 86 GB is in the text');
# The 16,000-token reading of "16k" is Exercise 4.2's, not a figure the
# chapter says circulates without a source.
unlike($chapter, qr/circulat/, 'no unsourced figure said to circulate');
like($chapter, qr/Figure 4\.1/, 'the block diagram is placed');
like($chapter, qr/Figure 4\.2/, 'the per-layer figure is placed');
like($chapter, qr/5as\/h \(scores\)/, 'the diagram labels the scores');
ok(-s root() . '/build/figures/04-per-layer.pdf', 'figure 04-per-layer was drawn');
unlike($chapter, qr/\?\?/, 'no undefined reference in chapter 4');

# The lesson comes first: the code after the drill; the printers, the flags
# and the runs in the appendix, where the chapter points.
{
    my $drill = index($chapter, 'Interview drill The question');
    my $code = index($chapter, 'The code fleet activations takes');
    my ($section) = $chapter =~ /the runs behind this chapter are in Appendix B\.(\d+)/;
    my $pointer = defined $section
        ? index($chapter, "the runs behind this chapter are in Appendix B.$section") : -1;
    ok($drill >= 0 && $code > $drill && $pointer > $code,
       'the code comes after the interview drill and points to the appendix');
    my $next = defined $section ? $section + 1 : 0;
    my ($appendix) = defined $section
        ? $flat =~ /(B\.$section Activation memory This section turns Chapter 4.*?)(?:B\.$next |Bibliography)/
        : ();
    ok(defined $appendix && index($appendix, 'The runs behind the chapter') >= 0,
       'the runs behind chapter 4 are in the appendix section it names');
}
# The drill's answer to "where does the 34 come from?" adds up to 34.
{
    my ($answer) = $chapter =~ /Where does the 34 come from\?\W+(.*?)the scores add/;
    ok(defined $answer, 'the drill says where the 34 comes from');
    $answer //= '';
    my @groups = $answer =~ /\((\d+(?: \+ \d+)*)/g;
    my $bytes = sum(0, map { sum(split / \+ /) } @groups);
    $bytes += 2 if $answer =~ /two one-byte dropout masks/;
    is($bytes, 34, "the drill's tensors add up to 34 bytes ($answer)");
}
# "None of the last three is small" names them in the order of the list:
# buffers, CUDA context, fragmentation, as the transcript prints them.
{
    my ($buf) = $chapter =~
        /buffers = [\d.]+ [kMGT]?B \(--library-bytes\)[^=]*= (\d[\d.]* [kMGT]?B)/;
    my ($ctx) = $chapter =~ /CUDA context = (\d[\d.]* [kMGT]?B)/;
    my ($frag) = $chapter =~
        /fragmentation = 10 % of [\d.]+ [kMGT]?B \(--fragmentation\) = (\d[\d.]* [kMGT]?B)/;
    ok(defined $buf && defined $ctx && defined $frag,
       "design A's transcript prints buffers, context and fragmentation");
    ok(index($chapter, "None of the last three is small: at design A’s layout they are "
             . join(', ', grep defined, $buf, $ctx) . " and " . ($frag // '')) >= 0,
       'the three terms are named in the order of the list');
}
# The prose says what the code does with --fragmentation: a fraction of the
# live bytes, not of what the allocator holds in all.
like($chapter, qr/holds 10 % more than the live tensors/,
     'fragmentation: 10 % on top of the live bytes, as gpu_memory adds it');
unlike($chapter, qr/no single GPU could hold even one layer/,
       'one layer (39 GB) fits on a card; the text does not say otherwise');
done_testing();
