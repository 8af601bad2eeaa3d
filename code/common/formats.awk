# Tangled from chapters/90-plumbing.nw; edit the chapter, not this file.
# grouped(x): a whole number with thousands separators, 1,024.
function grouped(x,   s) {
    s = sprintf("%.0f", x)
    while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
    return s
}
# duration(x): x seconds in the unit a person reads, as format.c writes it,
# for LaTeX: 388\,ms.
function duration(x,   v, u, w) {
    if (x == 0) return "0\\,s"
    if (x < 1e-3)        { v = x * 1e6; u = "\\ensuremath{\\mu}s" }
    else if (x < 1)      { v = x * 1e3; u = "ms" }
    else if (x < 600)    { v = x; u = "s" }
    else if (x < 7200)   { v = x / 60; u = "min" }
    else if (x < 172800) { v = x / 3600; u = "h" }
    else                 { v = x / 86400; u = "days" }
    w = sprintf("%.3g", v)
    if (w ~ /e/) w = sprintf("%.0f", v)
    return w "\\," u
}
# sig3(x): x to three significant figures, no trailing zeros, 0.0123,
# 33.3, 50, 1,234.
function sig3(x,   magnitude, s) {
    if (x == 0) return "0"
    magnitude = int(log(x < 0 ? -x : x) / log(10) + 100) - 100
    if (2 - magnitude <= 0) return grouped(x)
    s = sprintf("%.*f", 2 - magnitude, x)
    sub(/0+$/, "", s); sub(/\.$/, "", s)
    return s
}
# median_of(a, key, k): the median of a[key, 1] ... a[key, k], the
# middle one once sorted, or the mean of the middle two when k is even.
function median_of(a, key, k,   i, j, x, v) {
    for (i = 1; i <= k; i++) v[i] = a[key, i]
    for (i = 2; i <= k; i++)
        for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
            x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
        }
    return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
}
