/* Tangled from chapters/94-trainer-plumbing.nw; edit the chapter, not this file. */
#include <math.h>
#include <stdlib.h>

#include "minigpt.h"

void language_init(Language *lang, int vocab, uint64_t seed)
{
    Rng rng = { seed ^ 0x6c616e6775616765ULL };      /* "language" */
    lang->vocab = vocab;
    int letters = vocab - FIRST_LETTER;
    for (int w = 0; w < LEXICON_WORDS; w++) {
        lang->word_length[w] = 2 + rng_below(&rng, 4);
        for (int i = 0; i < lang->word_length[w]; i++)
            lang->word[w][i] = FIRST_LETTER + rng_below(&rng, letters);
        for (int s = 0; s < WORD_SUCCESSORS; s++)
            lang->successor[w][s] = rng_below(&rng, LEXICON_WORDS);
    }
}

static int next_word(const Language *lang, Rng *rng, int word)
{
    real u = rng_uniform(rng);
    int s = u < 0.5f ? 0 : u < 0.8f ? 1 : 2;
    return lang->successor[word][s];
}

static void emit(int *tokens, int n, int *k, int token)
{
    if (*k < n)
        tokens[*k] = token;
    (*k)++;
}

static void emit_words(const Language *lang, const int *words, int count,
                       int *tokens, int n, int *k)
{
    for (int i = 0; i < count; i++) {
        if (i > 0)
            emit(tokens, n, k, TOKEN_SPACE);
        for (int j = 0; j < lang->word_length[words[i]]; j++)
            emit(tokens, n, k, lang->word[words[i]][j]);
    }
}

void language_sample(const Language *lang, Rng *rng, int *tokens, int n)
{
    int k = 0;
    while (k < n) {
        int words[5], count = 2 + rng_below(rng, 4);
        words[0] = rng_below(rng, LEXICON_WORDS);
        for (int i = 1; i < count; i++)
            words[i] = next_word(lang, rng, words[i - 1]);
        emit_words(lang, words, count, tokens, n, &k);
        if (rng_uniform(rng) < 0.5f) {
            emit(tokens, n, &k, TOKEN_BAR);
            emit_words(lang, words, count, tokens, n, &k);
        }
        emit(tokens, n, &k, TOKEN_STOP);
    }
}
void language_entropy(const Language *lang, uint64_t seed, int n,
                      double *unigram, double *bigram)
{
    int V = lang->vocab;
    int *tokens = malloc(sizeof(int) * (size_t)n);
    double *single = calloc((size_t)V, sizeof(double));
    double *pair = calloc((size_t)V * (size_t)V, sizeof(double));
    if (!tokens || !single || !pair)
        abort();
    Rng rng = { seed };
    language_sample(lang, &rng, tokens, n);
    for (int i = 0; i < n; i++) {
        single[tokens[i]] += 1;
        if (i > 0)
            pair[tokens[i - 1] * V + tokens[i]] += 1;
    }
    *unigram = 0;
    *bigram = 0;
    for (int a = 0; a < V; a++) {
        if (single[a] > 0)
            *unigram -= single[a] / n * log(single[a] / n);
        double row = 0;
        for (int b = 0; b < V; b++)
            row += pair[a * V + b];
        for (int b = 0; b < V; b++)
            if (pair[a * V + b] > 0)
                *bigram -= pair[a * V + b] / (n - 1)
                         * log(pair[a * V + b] / row);
    }
    free(tokens);
    free(single);
    free(pair);
}

char token_char(int token)
{
    if (token == TOKEN_STOP)  return '.';
    if (token == TOKEN_SPACE) return ' ';
    if (token == TOKEN_BAR)   return '|';
    return (char)('a' + (token - FIRST_LETTER) % 26);
}
