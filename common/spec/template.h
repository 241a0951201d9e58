/* template.h - template parameters, ${param} references and --set overrides.
 *
 * A template is a job spec with a `params:` mapping of typed parameters:
 *
 *     params:
 *       ranks: {type: int, default: 2, min: 1, max: 1024, help: ranks per node}
 *       precision: {type: enum, values: [fp32, bf16, fp16], default: bf16}
 *       seed: 42                      # shorthand: type taken from the default
 *     resources: {ranks_per_node: ${ranks}}
 *     name: fmnist-${precision}
 *
 * A scalar that is exactly ${p}, quoted or not, takes p's value with its
 * type (so an int stays an int; quotes are needed inside {flow: maps});
 * ${p} inside a longer string is replaced by p's text.
 * $${ is a literal ${.  --set params.P=V sets a parameter, with its type
 * checked; --set a.b.c=V sets any spec key, and the spec's own validation
 * then checks it.  Core: works on a struct ynode tree, no I/O.
 */
#ifndef HPT_TEMPLATE_H
#define HPT_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

struct diag_list;
struct spec_override;
struct ynode;

/* Resolves *root in place: params bound (defaults, then --set), references
 * substituted, `params:` removed, key overrides applied (creating *root
 * when the document was empty).  Returns 0, or -1 after recording every
 * problem in dl; *root is always a valid (possibly partial) tree. */
int template_resolve(struct ynode **root, const struct spec_override *sets, size_t nsets,
		     struct diag_list *dl);

/* Whether a --set argument has the form KEY.PATH=VALUE: the shells check
 * it while parsing options, so a malformed one is a usage error; one that
 * is well formed but names a bad key or value is the spec's (status 3). */
bool template_override_is_valid(const char *arg);
#define TEMPLATE_OVERRIDE_FORM \
	"KEY.PATH=VALUE, KEY.PATH being names of [A-Za-z0-9_-] joined by '.'"

#endif
