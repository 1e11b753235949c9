/* strategies/ga_memetic.c: the memetic mode of the genetic algorithm (mode=memetic, `ga_memetic`): a child (or
 * the best member, once) improved by first-improvement Hamming local search, its local optimum replacing the worst
 * member when better (Lamarckian). */
#include "strategies/ga_internal.h"

/* memetic: the climber's Hamming neighbours in random order */
static int load_list(ga_state *g) {
  int rc = evo_shuffled_neighbors(&g->e, g->climb, MPT_NB_HAMMING, &g->list, &g->cap_list, &g->n_list);
  if (rc == 0) g->lpos = 0;
  return rc;
}

int ga_memetic_step(ga_state *g) {
  evo *e = &g->e;
  int dims = e->dims;
  if (g->climb >= 0) { /* first improvement among the evaluated proposals */
    int64_t best = evo_first_improvement(e, g->climb, g->prop, g->n_prop);
    g->n_prop = 0;
    if (best >= 0) {
      g->climb = best;
      int rc = load_list(g);
      if (rc < 0) return rc;
    }
    if (g->lpos >= g->n_list) { /* local optimum: replaces the worst member when better */
      int in, worst = ga_worst_member(g, g->climb, &in);
      if (!in && evo_fitness(e, g->climb) < evo_fitness(e, g->pid[worst])) {
        g->pid[worst] = g->climb;
        g->climbed[worst] = 1;
        mpt_space_config(e->sp, g->climb, g->pop + (size_t)worst * dims);
      }
      g->climb = -1;
    }
  }
  evo_gen_begin(e);
  if (g->climb < 0) { /* the best member when it was never improved (Lamarckian start) */
    int b = 0;
    for (int i = 1; i < g->n_pop; i++)
      if (evo_fitness(e, g->pid[i]) < evo_fitness(e, g->pid[b])) b = i;
    if (g->n_pop > 0 && !g->climbed[b] && g->pid[b] >= 0) {
      g->climbed[b] = 1;
      g->climb = g->pid[b];
      int rc = load_list(g);
      if (rc < 0) return rc;
    }
  }
  if (g->climb < 0) { /* a new child to improve */
    ga_rank(g);
    int m = 0;
    int rc = 0;
    if (!(g->immig > 0 && mpt_rng_uniform(&e->s->rng) < g->immig)) /* else an immigrant: a random start */
      rc = ga_breed(g, 0, 1, g->pid, g->n_pop, &m);
    if (rc < 0) return rc;
    if (m > 0 && g->npid[0] < 0) { /* penalty variant: an invalid child is a wasted iteration */
      if (evo_gen_add(e, -1)) return MPT_ERR_NOMEM;
      evo_gen_end(e);
      return 0;
    }
    g->climb = m > 0 ? g->npid[0] : evo_random_unseen(e);
    if (g->climb < 0) { evo_gen_end(e); return 0; }
    rc = load_list(g);
    if (rc < 0) return rc;
    if (evo_gen_add(e, g->climb)) return MPT_ERR_NOMEM;
  } else {
    int want = e->want < 1 ? 1 : e->want > g->P ? g->P : e->want;
    while (g->n_prop < want && g->lpos < g->n_list) {
      int64_t nb = g->list[g->lpos++];
      if (e->mine[nb] && evo_known(e, nb)) { /* tried before: first improvement at no cost */
        if (g->n_prop == 0 && evo_fitness(e, nb) < evo_fitness(e, g->climb)) {
          g->climb = nb;
          int rc = load_list(g);
          if (rc < 0) return rc;
        }
        continue;
      }
      g->prop[g->n_prop++] = nb;
      if (evo_gen_add(e, nb)) return MPT_ERR_NOMEM;
    }
  }
  evo_gen_end(e);
  return 0;
}
