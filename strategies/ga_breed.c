/* strategies/ga_breed.c: the breeding of the genetic algorithms (strategies/ga.c): members ranked by fitness,
 * parents drawn by rank from beta(1, pressure), single-point, two-point or uniform crossover, an invalid child
 * repaired (constraint-aware) or drawn again, mutation to a valid Hamming neighbour (gene-wise or
 * neighbour-uniform) or, in the penalty variant, of one parameter to any value. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/ga_internal.h"

/* f[] = each member's fitness, order[] = member indices by ascending fitness (stable insertion sort:
 * populations are small) */
void ga_rank(ga_state *g) {
  for (int i = 0; i < g->n_pop; i++) {
    g->f[i] = evo_fitness(&g->e, g->pid[i]);
    g->order[i] = i;
  }
  for (int i = 0; i < g->n_pop; i++) {
    int x = g->order[i], j = i;
    while (j > 0 && g->f[g->order[j - 1]] > g->f[x]) { g->order[j] = g->order[j - 1]; j--; }
    g->order[j] = x;
  }
}

/* the member of the worst fitness (the first of equals); *in: 1 when config id (>= 0) is a member */
int ga_worst_member(const ga_state *g, int64_t id, int *in) {
  int worst = 0;
  *in = 0;
  for (int i = 0; i < g->n_pop; i++) {
    *in |= id >= 0 && g->pid[i] == id;
    if (evo_fitness(&g->e, g->pid[i]) > evo_fitness(&g->e, g->pid[worst])) worst = i;
  }
  return worst;
}

static void mutate(ga_state *g, int *child) {
  evo *e = &g->e;
  if ((int64_t)mpt_rng_below(&e->s->rng, (uint64_t)g->mut) != 0) return;
  if (g->aware) {
    int64_t id = g->gene_mutation ? evo_random_hamming_gene(e, child) : evo_random_hamming(e, child);
    if (id >= 0) mpt_space_config(e->sp, id, child);
  } else {
    int d = (int)mpt_rng_below(&e->s->rng, (uint64_t)e->dims);
    if (e->nv[d] > 1) {
      int v = (int)mpt_rng_below(&e->s->rng, (uint64_t)(e->nv[d] - 1));
      child[d] = v >= child[d] ? v + 1 : v;
    }
  }
}

/* fills npop/npid[m0..target) with distinct children of the ranked population (order[]), each also
 * distinct from avoid[0..n_avoid) (ids); *m_out = members written in total */
int ga_breed(ga_state *g, int m0, int target, const int64_t *avoid, int n_avoid, int *m_out) {
  evo *e = &g->e;
  mpt_strategy *s = e->s;
  int dims = e->dims, m = m0;
  int *c1 = e->idx_tmp;
  int *c2 = malloc((size_t)dims * 2 * sizeof *c2);
  if (!c2) return MPT_ERR_NOMEM;
  int *c3 = c2 + dims;
  for (int tries = 0; m < target && tries < 20 * g->P; tries++) {
    if (g->local > 0 && mpt_rng_uniform(&s->rng) < g->local) {
      /* memetic step: an untried Hamming neighbour of the best member that still has one */
      int64_t pick = -1;
      for (int r = 0; r < g->n_pop && pick < 0; r++) {
        int64_t c = evo_neighbors(e, g->pop + (size_t)g->order[r] * dims, MPT_NB_HAMMING);
        int64_t fresh = 0;
        for (int64_t i = 0; i < c; i++)
          if (!e->mine[e->nb[i]]) /* untried by this search (not: unknown, see resume) */ e->nb[fresh++] = e->nb[i];
        for (int64_t i = 0; i < fresh && pick < 0; i++) {
          int64_t cand = e->nb[(i + (int64_t)mpt_rng_below(&s->rng, (uint64_t)fresh)) % fresh];
          int dup = 0;
          for (int j = 0; j < m && !dup; j++) dup = g->npid[j] == cand;
          if (!dup) pick = cand;
        }
      }
      if (pick >= 0) {
        mpt_space_config(e->sp, pick, g->npop + (size_t)m * dims);
        g->npid[m++] = pick;
        continue;
      }
    }
    int a = g->order[evo_beta1_index(&s->rng, g->pressure, g->n_pop)];
    int b = a;
    for (int t = 0; t < 50 && b == a; t++) b = g->order[evo_beta1_index(&s->rng, g->pressure, g->n_pop)];
    const int *pa = g->pop + (size_t)a * dims, *pb = g->pop + (size_t)b * dims;
    if (g->method == 2) {
      for (int d = 0; d < dims; d++) {
        int sw = (int)mpt_rng_below(&s->rng, 2);
        c2[d] = sw ? pb[d] : pa[d];
        c3[d] = sw ? pa[d] : pb[d];
      }
    } else {
      int p1 = dims > 1 ? 1 + (int)mpt_rng_below(&s->rng, (uint64_t)(dims - 1)) : 0, p2 = dims;
      if (g->method == 1 && dims > 2) {
        p2 = 1 + (int)mpt_rng_below(&s->rng, (uint64_t)(dims - 1));
        if (p2 < p1) { int t = p1; p1 = p2; p2 = t; }
      }
      for (int d = 0; d < dims; d++) {
        int sw = d >= p1 && d < p2;
        c2[d] = sw ? pb[d] : pa[d];
        c3[d] = sw ? pa[d] : pb[d];
      }
    }
    for (int ch = 0; ch < 2 && m < target; ch++) {
      memcpy(c1, ch ? c3 : c2, (size_t)dims * sizeof(int));
      int64_t id;
      if (g->aware) {
        /* as the paper: the crossover child is repaired first (strictly-adjacent, adjacent, Hamming, index
         * distance), then mutated to a random valid Hamming neighbour of that valid configuration */
        id = g->repair ? evo_repair(e, c1, 0) : evo_lookup(e, c1);
        if (id < 0) continue;
        mpt_space_config(e->sp, id, c1);
        mutate(g, c1);
        id = evo_lookup(e, c1);
      } else {
        mutate(g, c1);
        id = evo_lookup(e, c1);
      }
      int dup = 0;
      for (int j = 0; j < m && !dup; j++)
        dup = memcmp(g->npop + (size_t)j * dims, c1, (size_t)dims * sizeof(int)) == 0;
      for (int j = 0; j < n_avoid && !dup; j++) dup = id >= 0 && avoid[j] == id;
      if (dup) continue;
      memcpy(g->npop + (size_t)m * dims, c1, (size_t)dims * sizeof(int));
      g->npid[m++] = id;
    }
  }
  free(c2);
  *m_out = m;
  return 0;
}
