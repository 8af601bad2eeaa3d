#!/usr/bin/perl
# tests/93-known-answer.t: minigpt's loss and gradients against a forward
# pass written here, in NumPy, from the chapter's description alone: token
# and position embeddings, pre-norm blocks (layer norm with eps 1e-5, causal
# attention scaled by 1/sqrt(C/H), the tanh GELU MLP), a final layer norm, an
# untied head and the mean cross-entropy. It shares no code with the trainer.
#
# For a tiny model trained a few dozen steps (so that attention's scores are
# not all near zero), --dump gives the weights, a batch and its loss and
# gradients. This test computes the loss itself in double precision and
# compares: to 1e-9 relative for minigpt-fp64, to 2e-5 for minigpt (its
# single-precision rounding). Then it checks entries of every gradient
# tensor of the fp64 dump against central differences of its own forward
# pass (h = 1e-5), to 1e-6 of the tensor's largest gradient.
#
# Skipped, with the reason, where no python3 with NumPy is installed
# (Debian's python3-numpy, which `make` installs).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use JSON::PP ();
use Test::More;

my ($python) = grep { (run($_, '-c', 'import numpy'))[0] == 0 } 'python3', '/usr/bin/python3';
plan skip_all => 'no python3 with NumPy (install python3-numpy)' unless defined $python;

my $minigpt = root() . '/build/bin/minigpt';
my $fp64 = root() . '/build/bin/minigpt-fp64';
ok(-x $_, "$_ is built") or BAIL_OUT("no $_") for $minigpt, $fp64;
my $dir = tempdir(CLEANUP => 1);

# The independent forward pass, and central differences of it.
my $script = <<'PYTHON';
import json, sys
import numpy as np

d = sys.argv[1]
fd_entries = int(sys.argv[2])
man = json.load(open(d + "/manifest.json"))
names = [t["name"] for t in man["tensors"]]
W = {n: np.load(f"{d}/weights/{n}.npy").astype(np.float64) for n in names}
G = {n: np.load(f"{d}/grads/{n}.npy").astype(np.float64) for n in names}
inputs = np.load(d + "/inputs.npy")
targets = np.load(d + "/targets.npy")
L, C, H = man["layers"], man["hidden"], man["heads"]
B, T = inputs.shape
hs = C // H

def layernorm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b

def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))

def loss_of(W):
    x = W["wte"][inputs] + W["wpe"][np.arange(T)]
    mask = np.tril(np.ones((T, T), dtype=bool))
    for l in range(L):
        h = layernorm(x, W["ln1_w"][l], W["ln1_b"][l])
        qkv = h @ W["qkv_w"][l] + W["qkv_b"][l]
        q, k, v = (qkv[..., i * C:(i + 1) * C].reshape(B, T, H, hs).transpose(0, 2, 1, 3)
                   for i in range(3))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hs)
        s = np.where(mask, s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        y = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
        x = x + y @ W["proj_w"][l] + W["proj_b"][l]
        h = layernorm(x, W["ln2_w"][l], W["ln2_b"][l])
        x = x + gelu(h @ W["fc_w"][l] + W["fc_b"][l]) @ W["fcproj_w"][l] + W["fcproj_b"][l]
    logits = layernorm(x, W["lnf_w"], W["lnf_b"]) @ W["head_w"]
    m = logits.max(-1, keepdims=True)
    logz = (m + np.log(np.exp(logits - m).sum(-1, keepdims=True)))[..., 0]
    picked = np.take_along_axis(logits, targets[..., None], -1)[..., 0]
    return float((logz - picked).mean())

out = {"loss_numpy": loss_of(W), "loss_dump": float(np.load(d + "/loss.npy")),
       "fd": []}
h = 1e-5
for n in names if fd_entries > 0 else []:
    flat = W[n].reshape(-1)
    size = flat.size
    for e in range(fd_entries):
        i = (2 * e + 1) * size // (2 * fd_entries)
        saved = flat[i]
        flat[i] = saved + h
        up = loss_of(W)
        flat[i] = saved - h
        down = loss_of(W)
        flat[i] = saved
        out["fd"].append({"tensor": n, "index": int(i),
                          "numeric": (up - down) / (2 * h),
                          "analytic": float(G[n].reshape(-1)[i]),
                          "largest": float(np.abs(G[n]).max())})
print(json.dumps(out))
PYTHON
open my $fh, '>', "$dir/forward.py" or die;
print $fh $script;
close $fh;

my @tiny = qw(--layers 2 --hidden 16 --heads 2 --seq 8 --batch 4 --vocab 16
              --seed 7 --quiet);
for my $case ([$minigpt, 'minigpt', 2e-5, 0], [$fp64, 'minigpt-fp64', 1e-9, 4]) {
    my ($bin, $name, $rtol, $fd) = @$case;
    my ($status, undef, $err) = run($bin, @tiny, '--steps', 40, '--lr', '1e-2',
                                    '--save', "$dir/$name.ckpt");
    is($status, 0, "$name: 40 steps of training to move the weights") or diag $err;
    ($status, undef, $err) = run($bin, @tiny, '--steps', 40, '--resume', "$dir/$name.ckpt",
                                 '--dump', "$dir/$name");
    is($status, 0, "$name: --dump of the trained weights") or diag $err;
    ($status, my $out, $err) = run($python, "$dir/forward.py", "$dir/$name", $fd);
    is($status, 0, "$name: the NumPy forward pass ran") or diag $err;
    my $r = eval { JSON::PP::decode_json($out) } // {};
    ok(defined $r->{loss_numpy}, "$name: it printed a loss");
    close_to($r->{loss_dump}, $r->{loss_numpy} // 0, $rtol,
             "$name: the loss minigpt computed is NumPy's to $rtol relative (" . sprintf("%.10g vs %.10g", $r->{loss_dump} // 0, $r->{loss_numpy} // 0) . ")");
    cmp_ok(abs(($r->{loss_numpy} // 0) - log 16), '>', 0.05,
           "$name: and the model has moved away from the uniform loss ln V");
    next unless $fd;
    my %worst;
    for my $e (@{ $r->{fd} // [] }) {
        my $miss = abs($e->{analytic} - $e->{numeric}) / ($e->{largest} || 1);
        $worst{$e->{tensor}} = $miss if $miss > ($worst{$e->{tensor}} // -1);
    }
    is(scalar keys %worst, 17, "$name: central differences at $fd entries of all 17 tensors");
    for my $tensor (sort keys %worst) {
        cmp_ok($worst{$tensor}, '<=', 1e-6,
               "$name: ${tensor}'s gradient agrees with NumPy's central differences (" . sprintf('%.1e', $worst{$tensor}) . ')');
    }
}

done_testing();
