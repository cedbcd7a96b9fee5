/* The three policy kinds as policy.c sees them; private to the policies.
 * Each keeps its state behind a void pointer and validates nothing:
 * policy_create has done that, and a create returns NULL only when out of
 * memory. */
#ifndef RESID_POLICY_KINDS_H
#define RESID_POLICY_KINDS_H

#include "policy.h"

void *policy_lru_create(const struct policy_params *p);
void policy_lru_destroy(void *s);
void policy_lru_on_fault(void *s, uint32_t chunk, uint64_t seq);
uint64_t policy_lru_next_use(void *s, uint32_t chunk);

void *policy_learned_create(const struct policy_params *p);
void policy_learned_destroy(void *s);
void policy_learned_on_fault(void *s, uint32_t chunk, uint64_t seq);
uint64_t policy_learned_next_use(void *s, uint32_t chunk);
uint32_t policy_learned_predict(void *s, uint32_t chunk, uint32_t *out,
				uint32_t max);

void *policy_declared_create(const struct policy_params *p);
void policy_declared_destroy(void *s);
void policy_declared_on_access(void *s, uint32_t chunk);
uint64_t policy_declared_next_use(void *s, uint32_t chunk);
uint64_t policy_declared_next_use_consumed(void *s, uint32_t chunk);
int policy_declared_near(void *s, uint32_t chunk, uint32_t before,
			 uint32_t after);
uint32_t policy_declared_predict(void *s, uint32_t chunk, uint32_t *out,
				 uint32_t max);

#endif
