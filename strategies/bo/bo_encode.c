/* strategies/bo/bo_encode.c: the GP inputs of bo's candidates. Each configuration is the index encoding
 * of its active parameters (those with more than one value) on [0, 1], and/or a one-hot code of every
 * active parameter (the option `encoding`; strategies/bo/bo.c says why both by default). No N x D table
 * is kept: a candidate is encoded when it is needed, the same doubles every time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/bo/bo_encode.h"

/* the encoding options: which parts, and their weights */
static void read_encoding_options(bo_state *b, mpt_strategy *s) {
  const char *encs = mpt_strategy_opt_str(s, "encoding");
  b->enc = strcmp(encs, "value") == 0 ? MPT_ENC_VALUE : strcmp(encs, "log2") == 0 ? MPT_ENC_LOG2 : MPT_ENC_INDEX;
  b->use_index = strcmp(encs, "onehot") != 0;
  b->use_onehot = !b->use_index || strcmp(encs, "index+onehot") == 0;
  b->ohw = b->use_index ? mpt_strategy_opt_double(s, "onehot_weight") : 1.0;
  b->binw = b->use_index && b->use_onehot ? mpt_strategy_opt_double(s, "binary_weight") : 1.0;
}

int bo_encoding_init(bo_state *b, mpt_strategy *s) {
  const mpt_space *sp = s->space;
  read_encoding_options(b, s);
  b->sp = sp;
  int dims = mpt_space_dims(sp);
  b->act = malloc(sizeof(int) * (size_t)(dims > 0 ? dims : 1));
  b->enc_full = malloc(sizeof(double) * (size_t)(dims > 0 ? dims : 1));
  b->enc_cfg = malloc(sizeof(int) * (size_t)(dims > 0 ? dims : 1));
  if (!b->act || !b->enc_full || !b->enc_cfg) return MPT_ERR_NOMEM;
  /* pruning: parameters with one value carry no information */
  int n_act = 0, n_oh = 0;
  for (int p = 0; p < dims; p++)
    if (mpt_space_n_values(sp, p) > 1) { b->act[n_act++] = p; n_oh += mpt_space_n_values(sp, p); }
  b->n_act = n_act;
  b->n_oh = n_oh;
  /* GP inputs: the active parameters' encodings and/or their one-hot codes (w / sqrt 2 per set bit,
   * so each differing parameter adds w^2 to the squared distance) */
  b->D = (b->use_index ? n_act : 0) + (b->use_onehot ? n_oh : 0);
  if (b->D < 1) b->D = 1; /* no active parameter: one input, 0 everywhere */
  /* the feasibility model's inputs: the index part when there is one */
  b->feas_dims = b->use_index && n_act > 0 ? n_act : b->D;
  return 0;
}

void bo_encode(bo_state *b, int64_t c, double *x) {
  const mpt_space *sp = b->sp;
  memset(x, 0, sizeof(double) * (size_t)b->D);
  if (b->n_act == 0) return;
  mpt_space_config(sp, c, b->enc_cfg);
  if (b->use_index) {
    mpt_space_encode_idx(sp, b->enc_cfg, b->enc, b->enc_full);
    for (int d = 0; d < b->n_act; d++)
      x[d] = (mpt_space_n_values(sp, b->act[d]) == 2 ? b->binw : 1.0) * b->enc_full[b->act[d]];
    x += b->n_act;
  }
  if (b->use_onehot)
    for (int d = 0, o = 0; d < b->n_act; o += mpt_space_n_values(sp, b->act[d]), d++)
      x[o + b->enc_cfg[b->act[d]]] = b->ohw * M_SQRT1_2;
}

const double *bo_point(bo_state *b, int64_t c) {
  bo_encode(b, c, b->xq);
  return b->xq;
}

void bo_encode_rows(void *ctx, int64_t first, int64_t n, double *rows) {
  bo_state *b = ctx;
  for (int64_t i = 0; i < n; i++) bo_encode(b, first + i, rows + (size_t)i * (size_t)b->D);
}
