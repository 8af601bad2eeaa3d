#!/usr/bin/perl
# The measured precision (Chapter 12's Sections "One model in four
# precisions" to "What it means"): every number the book prints from
# code/runs/12-precision.sh is recomputed here from what the runs wrote
# (the reports, the logs, the histogram), the formats' limits from the
# formats tool, the bytes table against fleet memory --precisions, and
# every sentence the script chose is the one the data choose.
#
# Nothing about speed is asserted: the cost's macros are checked to be the
# medians and ratios of the timed runs, and its sentence to be the one
# their range chooses.
#
# Run after `make`:  prove -v tests/12-runs.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use JSON::PP qw(decode_json);
use List::Util qw(max sum);
use POSIX qw(floor);
use Test::More;

my $root = root();
my $numbers = "$root/build/numbers/12-precision.tex";
my $data = "$root/build/data";
plan skip_all => 'make has not run code/runs/12-precision.sh'
    unless -f $numbers && -f "$data/12-run-fp32.json";
my %m = %{ read_macros($numbers) };

sub csv_rows {                 # a CSV with a header: a list of hashes
    my ($path) = @_;
    my @lines = split /\n/, slurp($path) // '';
    my @head = split /,/, shift @lines // '';
    return map { my @f = split /,/, $_, -1; +{ map { $head[$_] => $f[$_] }
                                               0 .. $#head } } @lines;
}
sub report { return decode_json(slurp("$data/12-run-$_[0].json") // '{}') }
sub finite { return defined $_[0] && $_[0] =~ /^[-+]?[\d.]+(e[-+]?\d+)?$/i }
sub signed {                   # below 10^-4 as a power of ten
    my ($x) = @_;
    my $a = abs $x;
    return ($x < 0 ? '$-$' : '+') . sprintf('%.2g', $a)
        if $a == 0 || $a >= 1e-4;
    my $e = floor(log($a) / log(10));
    return sprintf('$%s%.2g \\times 10^{%d}$', $x < 0 ? '-' : '+',
                   $a / 10**$e, $e);
}
sub pc {                       # a fraction as the script prints a percentage
    my ($x) = @_;
    return ($x == 0 ? '0' : $x < 1e-4 ? sprintf('%.2g', 100 * $x)
            : $x > 0.995 && $x < 1 ? sprintf('%.4g', 100 * $x)
            : sprintf('%.3g', 100 * $x)) . '\\,\\%';
}

my @runs = grep { -f "$data/12-run-$_.json" }
           qw(fp32 bf16 fp16 fp8);
my %camel = (fp32 => 'FpThirtyTwo', bf16 => 'BfSixteen',
             fp16 => 'FpSixteen', fp8 => 'FpEight',
             'fp32-grads' => 'FpThirtyTwoGrads');
my %report = map { $_ => report($_) } @runs, 'fp32-grads';

# ------------------------------------------------------------ the runs ----
my $fp32 = $report{fp32};
is($report{$_}{precision}, $_, "$_: the run's precision") for @runs;
for my $run (@runs) {
    is($report{$run}{$_}, $fp32->{$_}, "$run: the same $_ as fp32")
        for qw(params layers hidden seq batch vocab steps seed);
}
is($m{PrecRunParams}, grouped(minigpt_params(%$fp32)),
   'the parameter count is the one the shapes give');
is($m{PrecRunSteps}, $fp32->{steps}, 'the steps are the runs\'');

# ---------------------------------------------------------- the losses ----
my %val;
for my $run (@runs) {
    my @log = csv_rows("$data/12-log-$run.csv");
    is(scalar @log, $fp32->{steps}, "$run: a log line per step");
    my ($last) = grep { $_->{val_loss} ne '' } reverse @log;
    $val{$run} = $report{$run}{val_loss};
    if (finite($val{$run})) {
        close_to($last->{val_loss}, $val{$run}, 1e-6,
                 "$run: the log's last validation loss is the report's");
        is($m{"PrecRunLoss$camel{$run}"}, sprintf('%.4f', $val{$run}),
           "$run: the final loss the book prints");
        is($m{"PrecRunDiff$camel{$run}"}, signed($val{$run} - $val{fp32}),
           "$run: its difference from fp32")
            unless $run eq 'fp32';
    } else {
        is($m{"PrecRunLoss$camel{$run}"}, 'not a number',
           "$run: a loss that is not a number is said to be one");
    }
    # The figure's table holds the same validation losses.
    my @curve = csv_rows("$data/12-val_loss.csv");
    my ($column) = grep { /^\Q$run\E$/ || ($run eq 'fp16' && /scaled$/) }
                   keys %{ $curve[0] // {} };
    my %at = map { $_->{step} => $_->{val_loss} }
             grep { $_->{val_loss} ne '' } @log;
    my @wrong = grep { ($_->{$column // ''} // 'none') ne $at{$_->{step}} }
                @curve;
    ok(@curve && !@wrong, "$run: the figure's column is the log's "
       . 'validation loss');
}
my $yard = max(abs($val{bf16} - $val{fp32}), abs($val{fp16} - $val{fp32}));
is($m{PrecRunRoundingSpread}, sprintf('%.2g', $yard),
   'the furthest bf16 or scaled fp16 ended from fp32');
ok(exists $report{fp8}, 'fp8 ran');
my $eight = finite($val{fp8}) && abs($val{fp8} - $val{fp32}) > $yard
          ? 'further' : 'no further';
like($m{PrecRunFpEightVerdict}, qr/^fp8 ended at .*: \Q$eight\E than/,
     "the fp8 sentence: $eight from fp32 than the 16-bit runs");

# ------------------------------------------------------- the gradients ----
# The limits come from the formats tool, run here; an element lies below a
# power of two 2^k exactly when its binary exponent is below k.
my $ranges = decode_json((run("$root/build/bin/formats", '--ranges',
                              '--json'))[1] || '{}');
my %limit;
$limit{$_->{format}} = $_ for @{ $ranges->{formats} // [] };
ok($limit{fp16} && $limit{bf16}, 'formats --ranges gives fp16 and bf16');
my $lg = sub { return log($_[0]) / log(2) };
my $sub16 = sprintf '%.0f', $lg->($limit{fp16}{smallest_subnormal});
my $normal16 = sprintf '%.0f', $lg->($limit{fp16}{smallest_normal});
my $over16 = floor($lg->($limit{fp16}{largest})) + 1;
my $sub_bf = sprintf '%.0f', $lg->($limit{bf16}{smallest_subnormal});
my $scale = $report{fp16}{loss_scale}{initial};
my $s = sprintf '%.0f', $lg->($scale);
is($m{PrecRunHalfSubnormal}, $sub16, 'fp16\'s smallest subnormal');
is($m{PrecRunHalfNormal}, $normal16, 'fp16\'s smallest normal');
is($m{PrecRunBfloatSubnormal}, $sub_bf, 'bf16\'s smallest subnormal');
is($m{PrecRunScaleExponent}, $s, 'the scale is the fp16 run\'s initial');
is($m{PrecRunHalfOctaves}, $over16 - $sub16, 'fp16\'s window in octaves');
my @small = qw(no one two three four five six seven eight nine ten eleven
               twelve);
is($m{PrecRunHalfBits}, $small[$limit{fp16}{significant_bits}],
   'fp16\'s significant bits');
is($m{PrecRunBfloatBits}, $small[$limit{bf16}{significant_bits}],
   'bf16\'s significant bits');

my (%count, %total, $lo, $hi);
for my $row (csv_rows("$data/12-histogram.csv")) {
    next if $row->{exponent} eq 'zero';
    for my $kind (qw(param activation)) {
        $count{$kind}{$row->{exponent}} = $row->{"${kind}_grads"};
        $total{$kind} += $row->{"${kind}_grads"};
    }
    next unless $row->{param_grads} + $row->{activation_grads} > 0;
    $lo = $row->{exponent} if !defined $lo || $row->{exponent} < $lo;
    $hi = $row->{exponent} if !defined $hi || $row->{exponent} > $hi;
}
ok($total{param} > 0 && $total{activation} > 0,
   'the histogram counts both kinds of gradient');
my ($zeros) = grep { $_->{exponent} eq 'zero' }
              csv_rows("$data/12-histogram.csv");
is(($total{param} // 0) + ($zeros // {})->{param_grads}, $fp32->{params},
   'the parameters\' histogram counts every parameter, once');
sub below {
    my ($kind, $k) = @_;
    return sum(0, map { $count{$kind}{$_} } grep { $_ < $k }
                  keys %{ $count{$kind} }) / $total{$kind};
}
is($m{PrecRunLowestExponent}, $lo, 'the lowest octave with a gradient');
is($m{PrecRunHighestExponent}, $hi, 'the highest');
my (%b, %bs, %o);
for my $kind (qw(param activation)) {
    my $name = ucfirst $kind;
    $b{$kind} = below($kind, $sub16);
    $bs{$kind} = below($kind, $sub16 - $s);
    $o{$kind} = 1 - below($kind, $over16 - $s);
    is($m{"PrecRun${name}BelowSubnormal"}, pc($b{$kind}),
       "$kind gradients below fp16's smallest subnormal");
    is($m{"PrecRun${name}BelowSubnormalScaled"}, pc($bs{$kind}),
       '... and once scaled');
    is($m{"PrecRun${name}ToZero"}, pc(below($kind, $sub16 - 1)),
       '... below half of it, which rounds to zero');
    is($m{"PrecRun${name}BelowNormal"}, pc(below($kind, $normal16)),
       '... below its smallest normal');
    is($m{"PrecRun${name}OverflowScaled"}, pc($o{$kind}),
       '... above its largest value once scaled');
}
my $tail = $b{param} + $b{activation};
like($m{PrecRunScaleVerdict},
     $tail == 0 ? qr/^No nonzero gradient/
     : $bs{param} + $bs{activation} == 0 ? qr/not one nonzero element/
     : qr/falls from/,
     'the sentence on the tail is the one the counts choose');
like($m{PrecRunOverflowVerdict},
     $o{param} + $o{activation} == 0 ? qr/^None reaches/ : qr/^Once scaled/,
     'the sentence on overflow too');
my $bf = below('param', $sub_bf) + below('activation', $sub_bf);
like($m{PrecRunBfloatVerdict}, $bf == 0 ? qr/^No element comes near/
     : qr/^Some elements/, 'the sentence on bf16\'s floor too');

# ------------------------------------------- fp16 without the scaler ----
# Each share k: fp16 at a fixed S = 2^-k. The k of designs A and B from
# chapter 3's tokens per replica over this model's B*T; the predicted
# flushes from fp32's histogram, the lost ones from each run's own (whose
# exponents are the unscaled gradient's); the onset and the failure by
# the rules the appendix states.
my $work = "$root/build/precision";
my @share = csv_rows("$data/12-share.csv");
my ($lines) = csv_rows("$data/12-share-lines.csv");
ok(@share >= 8 && $lines, 'the shares\' table and its lines were written');
my $tokens = $fp32->{batch} * $fp32->{seq};
is($m{PrecShareTokens}, $tokens, 'the tokens of this model\'s step');
my %design;
for my $x (qw(A B)) {
    my $t = read_macros("$root/build/numbers/03-design-" . lc($x) . '.tex')
            ->{"Design${x}TokensPerReplica"} // '';
    $t =~ s/,//g;
    $design{$x} = sprintf '%.0f', log($t / $tokens) / log(2);
    is($m{"PrecShareDesign${x}K"}, $design{$x},
       "design $x: k = log2 of its tokens per replica ($t) over $tokens");
}
my %row = map { $_->{k} => $_ } @share;
ok(exists $row{$design{A}} && exists $row{$design{B}} && exists $row{0},
   'the sweep holds k = 0 and both designs\' shares');
my $most = $lines->{most};
my $floor16 = $sub16 - 1;          # half the smallest subnormal
my %fp32_zero = map { $_ => $zeros->{"${_}_grads"} } qw(param activation);
sub share_hist {
    my ($k) = @_;
    my (%c, %z);
    for my $r (csv_rows("$work/share-$k.csv")) {
        for my $kind (qw(param activation)) {
            if ($r->{exponent} eq 'zero') { $z{$kind} = $r->{"${kind}_grads"} }
            else { $c{$kind}{$r->{exponent}} = $r->{"${kind}_grads"} }
        }
    }
    return (\%c, \%z);
}
my (%lost, %pred, %loss);
for my $k (sort { $a <=> $b } keys %row) {
    my $r = decode_json(slurp("$work/share-$k.json") // '{}');
    is($r->{precision}, 'fp16', "k = $k: an fp16 run");
    is($r->{loss_scale}{initial}, 2**-$k, "k = $k: S = 2^-$k from the start");
    is($r->{loss_scale}{final}, 2**-$k, '... to the end');
    is($r->{loss_scale}{skipped_steps}, 0, '... skipping no step');
    is($r->{steps}, $m{PrecShareSteps}, '... for the section\'s steps');
    $loss{$k} = $r->{val_loss};
    close_to($row{$k}{val_loss}, $loss{$k}, 1e-12,
             "k = $k: the table's loss is the run's");
    is($row{$k}{tokens}, $tokens * 2**$k, "k = $k: 2^k times the tokens");
    my ($c, $z) = share_hist($k);
    for my $kind (qw(param activation)) {
        my $below = sum(0, map { $c->{$kind}{$_} } grep { $_ < $floor16 + $k }
                              keys %{ $c->{$kind} });
        $lost{$k}{$kind} = ($z->{$kind} + $below - $fp32_zero{$kind})
                           / $total{$kind};
        $pred{$k}{$kind} = below($kind, $floor16 + $k);
        close_to($row{$k}{"lost_$kind"}, $lost{$k}{$kind}, 1e-5,
                 "k = $k: the $kind gradients its first step lost");
        close_to($row{$k}{"predicted_$kind"}, $pred{$k}{$kind}, 1e-5,
                 "k = $k: the $kind gradients fp32's histogram predicts");
    }
}
is($m{PrecShareUnscaledActivationLost}, pc($lost{0}{activation}),
   'k = 0, plain fp16: the activations\' gradients lost');
is($m{PrecShareUnscaledParamLost}, pc($lost{0}{param}),
   '... and the parameters\'');
# Section 12.9's words on these: plain fp16 "loses about as many" of the
# activations' gradients as fp32's histogram puts below fp16's floor (within
# a factor of two here), and "that is little" (under a tenth of them).
{
    my ($lost, $pred) = ($lost{0}{activation}, $pred{0}{activation});
    ok($pred > 0 && $lost <= 2 * $pred && $lost >= $pred / 2,
       "plain fp16 lost about as many activation gradients ($lost) as the "
       . "histogram puts below its floor ($pred)");
    cmp_ok($lost, '<', 0.1, '... and few of them, as the text says');
}
my %other = map { $_ => decode_json(slurp("$work/share-$_.json") // '{}') }
            qw(fp32 bf16 scaled);
is($other{bf16}{loss_scale}{initial}, 2**-$most, 'bf16 at S = 2^-most');
is($other{scaled}{loss_scale}{initial}, $scale * 2**-$most,
   'fp16 with the scaler from its default times 2^-most');
close_to($lines->{$_}, $other{$_}{val_loss}, 1e-12,
         "the figure's $_ loss is the run's") for qw(fp32 bf16 scaled);
my $base = $other{fp32}{val_loss};
my $band = max(map { abs($other{$_}{val_loss} - $base) } qw(bf16 scaled));
is($m{PrecShareYard}, sprintf('%.2g', $band),
   'the yard: the furthest bf16 or scaled fp16 ended from fp32');
close_to($lines->{yard}, $band, 1e-8,
         "the figure's band of rounding is the yard");
my @ks = sort { $a <=> $b } keys %row;
my %gap = map { $_ => finite($loss{$_}) ? $loss{$_} - $base : 1e30 } @ks;
my ($onset) = grep { my $j = $_; !grep { $gap{$ks[$_]} <= $band } $j .. $#ks }
              0 .. $#ks;
$onset = $ks[$onset] if defined $onset;
like($m{PrecShareOnsetVerdict}, defined $onset
     ? qr/From \$k = $onset\$ on, every run without the scaler ended/
     : qr/No share up to/, 'the onset the losses choose');
my @early = grep { (!defined $onset || $_ < $onset) && $gap{$_} > $band } @ks;
like($m{PrecShareOnsetVerdict}, @early
     ? qr/Below it, the runs? at \Q@{[@early > 1 ? join(', ', map { "\$k = $_\$" }
           @early[0 .. $#early - 1]) . " and \$k = $early[-1]\$"
           : "\$k = $early[0]\$"]}\E ended above/
     : qr/Below it, none did\./, 'the shares below the onset above the band');
my $unigram = $fp32->{unigram_entropy};
my $word = sub { my $l = shift; !finite($l) || $l >= $unigram ? 'failed'
                 : $l - $base > $band ? 'lagged' : 'kept up' };
my ($fail) = grep { $word->($loss{$_}) eq 'failed' } @ks;
like($m{PrecShareFailVerdict}, defined $fail
     ? qr/^At \$k = $fail\$, a step over [\d,]+ tokens, the run failed/
     : qr/^None failed outright/, 'the failure the losses choose');
for my $k (grep { defined $fail && $_ > $fail } @ks) {
    next if $word->($loss{$k}) eq 'failed';
    my $at = sprintf '%.4f', $loss{$k};
    like($m{PrecShareFailVerdict}, qr/at \$k = $k\$, .* it ended at \Q$at\E/,
         "k = $k, past the failure, is named with its loss");
}
for my $x (qw(A B)) {
    my $k = $design{$x};
    is($m{"PrecShareDesign${x}Lost"}, pc($lost{$k}{activation}),
       "design $x: the activations' gradients lost");
    is($m{"PrecShareDesign${x}Diff"}, signed($loss{$k} - $base),
       "design $x: its loss against fp32's");
    my $w = $word->($loss{$k});
    like($m{PrecShareDesignVerdict}, defined $onset && $k == $onset
         ? qr/Design~${x}'s share, \$k = $k\$, is that onset\./
         : qr/Design~${x}'s share, \$k = $k\$, .*?\Q@{[$w eq 'kept up'
           ? "within rounding's band" : $w eq 'lagged'
           ? "above rounding's band" : 'a failed run']}\E/,
         "design ${x}'s run: $w");
}
my $global = read_macros("$root/build/numbers/03-design-a.tex")
             ->{DesignATokensPerStep} // '';
$global =~ s/,//g;
is($m{PrecShareGlobalK}, sprintf('%.0f', log($global / $tokens) / log(2)),
   "chapter 3's global batch, $global tokens, as a share");
# bf16 at the largest share, S = 2^-most, against bf16 at S = 1 is checked
# bit for bit in tests/12-precision.t; here, that the cure sentence reads
# the runs.
like($m{PrecShareCureVerdict},
     qr/^At \$k = $most\$, .* fp16 with it ended \Q@{[signed($other{scaled}{val_loss} - $base)]}\E and bf16 \Q@{[signed($other{bf16}{val_loss} - $base)]}\E:/,
     'the cure: fp16 with the scaler and bf16 at the largest share');

# ----------------------------------------------------- the loss scale ----
my @log16 = csv_rows("$data/12-log-fp16.csv");
my $skipped = grep { $_->{skipped} == 1 } @log16;
is($report{fp16}{loss_scale}{skipped_steps}, $skipped,
   'the fp16 report counts the skipped steps its log marks');
is($m{PrecRunSkipped}, $skipped <= 12 ? $small[$skipped] : grouped($skipped),
   '... and the book prints that count');
my @jumps = grep { my ($was, $now) = ($log16[$_ - 1]{loss_scale},
                                      $log16[$_]{loss_scale});
                   !($now == $was || $now == $was / 2 || $now == 2 * $was) }
            1 .. $#log16;
is_deeply([map { $log16[$_]{step} } @jumps], [],
          'from step to step the scale held, halved or doubled');
my $table = slurp("$root/build/numbers/12-precision-scale.tex") // '';
my $rows = () = $table =~ /^\d+(?:--\d+)? & /mg;
my $changes = grep { $_ > 0 && $log16[$_]{loss_scale}
                     != $log16[$_ - 1]{loss_scale} } 0 .. $#log16;
is($rows, $changes + 1, 'the table has a row per stretch at one scale');
like($m{PrecRunScaleStory}, $skipped == 0 ? qr/^No step overflowed/
     : $skipped == 1 ? qr/^One step overflowed, step $log16[(grep {
       $log16[$_]{skipped} == 1 } 0 .. $#log16)[0]]{step}:/
     : qr/^\w+ steps overflowed/, 'the story of the scale is the log\'s');

# ----------------------------------------------------------- the bytes ----
# Each run's bytes per parameter, kind by kind, against Part I's
# convention: fp32 Adam, mixed precision twice, and the fp32 accumulator.
my %convention;
my (undef, $csv) = run("$root/build/bin/fleet", qw(memory --precisions
                                                    --csv));
my @lines = split /\n/, $csv // '';
my @head = split /,/, shift @lines // '';
for my $line (@lines) {
    my @f = split /,/, $line;
    my %row = map { $head[$_] => $f[$_] } 0 .. $#head;
    $convention{$row{key}} = \%row;
}
my %wants = (fp32 => ['fp32', 16], bf16 => ['mixed', 16],
             fp16 => ['mixed', 16], 'fp32-grads' => ['fp32-grads', 18]);
my $bytes_table = slurp("$root/build/numbers/12-precision-bytes.tex") // '';
for my $run (qw(fp32 bf16 fp16 fp32-grads)) {
    my ($key, $total) = @{ $wants{$run} };
    my $r = $report{$run};
    my $n = $r->{params};
    my %held = map { $_ => $r->{bytes_held}{$_} / $n }
               qw(weights gradients master_weights master_gradients moments);
    my $c = $convention{$key};
    is($held{$_}, $c->{$_}, "$run: $_ per parameter, as $key counts them")
        for qw(weights gradients master_weights master_gradients);
    is($held{moments}, $c->{optimizer}, "$run: the moments, too");
    is($r->{bytes_per_param}, $total, "$run holds $total bytes per parameter");
    is($c->{total}, $total, "... which $key counts");
    is($m{"PrecRunBytes$camel{$run}"}, $total, '... and the book prints');
    my $row = join ' & ', map { $held{$_} } qw(weights gradients
        master_weights master_gradients moments);
    like($bytes_table, qr/ & \Q$row\E & $total & \Q$key\E & $total \\\\/,
         "$run: its row in the table");
}
like($m{PrecRunBytesVerdict}, qr/^Each run but fp8 holds/,
     'the sentence says every run holds what its convention counts');
# fp8: E4M3 for the blocks' four matrices (12 L C^2 numbers) with a 4-byte
# scale each, bf16 for the other weights and the gradients; its convention
# is 1 + 2 + 4 + 8, from the formats' bits.
{
    my $r = $report{fp8};
    my ($n, $L, $C) = @{$r}{qw(params layers hidden)};
    my $n8 = 12 * $L * $C * $C;
    is($r->{bytes_held}{weights}, $n8 + 2 * ($n - $n8) + 16 * $L,
       'fp8: the weights held, counted from the shapes');
    is($r->{bytes_held}{gradients}, 2 * $n, 'fp8: bf16 gradients');
    my $held = ($r->{bytes_held}{weights} + $r->{bytes_held}{gradients}
                + $r->{bytes_held}{master_weights}
                + $r->{bytes_held}{moments}) / $n;
    close_to($r->{bytes_per_param}, $held, 1e-12, 'fp8: bytes_per_param');
    is($m{PrecRunBytesFpEight}, sprintf('%.3g', $held),
       '... and the book prints it');
    is($m{PrecRunBytesEightShare}, pc($n8 / $n),
       'the share of the parameters in E4M3');
    like($m{PrecRunBytesEightVerdict}, qr/^fp8\ holds\ \Q$m{PrecRunBytesFpEight}\E
         \ bytes\ a\ parameter\ where\ its\ convention\ counts\ 15:/x,
         'the fp8 sentence names what it holds and the convention');
    like($bytes_table, qr/^fp8 & .* & fp8 & 15 \\\\/m,
         'fp8: its row in the table');
}

# ------------------------------------------------------------ the cost ----
my (%t, %turn);
for my $line (split /\n/, slurp("$root/build/precision/times.txt") // '') {
    my ($k, $run, $seconds) = split ' ', $line;
    push @{ $t{$run} }, $seconds;
    $turn{$k}{$run} = $seconds;
}
sub median {
    my @v = sort { $a <=> $b } @_;
    return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}
for my $run (qw(bf16 fp16 fp8)) {
    my $ratio = median(@{ $t{$run} }) / median(@{ $t{fp32} });
    is($m{"PrecRunRatio$camel{$run}"}, sprintf('%.2f', $ratio),
       "$run: the ratio of the median steps");
    my @q = map { $turn{$_}{$run} / $turn{$_}{fp32} } keys %turn;
    my ($low, $high) = (sort { $a <=> $b } @q)[0, -1];
    is($m{"PrecRunRatio$camel{$run}Range"},
       sprintf('%.2f--%.2f', $low, $high), '... and its range');
    next unless $run eq 'bf16';
    like($m{PrecRunCostVerdict}, $low > 1 ? qr/step took longer than/
         : $high < 1 ? qr/step took less time/ : qr/about as long/,
         'the sentence on the cost is the one the range chooses');
}
my @turns = keys %turn;
my $more = grep { $turn{$_}{fp16} > $turn{$_}{bf16} } @turns;
my $less = grep { $turn{$_}{fp16} < $turn{$_}{bf16} } @turns;
like($m{PrecRunHalfVerdict}, $more == @turns ? qr/^fp16 cost more/
     : $less == @turns ? qr/^fp16 cost less/ : qr/^The turns do not agree/,
     'the sentence on fp16 against bf16 is the one every turn chooses');
my $cpu = decode_json(slurp("$root/build/machine.json") // '{}')->{cpu};
is($m{PrecRunCpu}, $cpu, 'the machine is the one build/machine.json names');

done_testing();
