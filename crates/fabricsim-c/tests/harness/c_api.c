/* The C interface from C (C11): a lone message on an idle fabric completes at its ideal FCT,
 * and the results come back as JSON and as Arrow arrays (the C data interface) that agree.
 * Built and run by tests/harness.rs; exits non-zero on a mismatch. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim.h"

#define CHECK(call)                                                  \
  do {                                                               \
    if ((call) == FS_ERROR) {                                        \
      fprintf(stderr, "%s: %s\n", #call, fs_last_error());           \
      return 2;                                                      \
    }                                                                \
  } while (0)

/* The child of a struct array named `name`, or -1. */
static int64_t child(const struct ArrowSchema* s, const char* name) {
  for (int64_t i = 0; i < s->n_children; i++)
    if (strcmp(s->children[i]->name, name) == 0) return i;
  return -1;
}

int main(void) {
  const char* scenario =
      "seed = 1\n[topology]\nhosts = 128\nradix = 16\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n";
  FsSession* s = NULL;
  CHECK(fs_session_new(scenario, 1, &s));
  uint32_t id = 99;
  CHECK(fs_send(s, 0, 127, 1 << 20, 1000000, 42, &id));
  CHECK(fs_run_until(s, 10000000000ULL));
  FsCompletion c[4];
  size_t n = fs_completions(s, c, 4);
  if (n != 1 || c[0].id != id || c[0].tag != 42) {
    printf("completions: %zu (id %u tag %" PRIu64 ")\n", n, n ? c[0].id : 0, n ? c[0].tag : 0);
    return 1;
  }
  struct ArrowSchema schema;
  struct ArrowArray array;
  CHECK(fs_results_arrow(s, "flows", &schema, &array));
  int64_t fct = child(&schema, "fct_ps"), ideal = child(&schema, "ideal_fct_ps"), traffic = child(&schema, "traffic");
  int failed = strcmp(schema.format, "+s") != 0 || array.length != 1 || fct < 0 || ideal < 0;
  if (!failed) {
    const struct ArrowArray* f = array.children[fct];
    const struct ArrowArray* i = array.children[ideal];
    uint64_t got = ((const uint64_t*)f->buffers[1])[0], want = ((const uint64_t*)i->buffers[1])[0];
    /* a lone message takes its ideal FCT exactly, and the completion says the same */
    failed = strcmp(schema.children[fct]->format, "L") != 0 || got != want || got != c[0].fct_ps ||
             (schema.children[fct]->flags & ARROW_FLAG_NULLABLE) == 0;
    printf("C: one message, FCT %" PRIu64 " ps, ideal %" PRIu64 " ps, completion %" PRIu64 " ps\n", got, want, c[0].fct_ps);
    if (traffic >= 0) {
      const struct ArrowArray* t = array.children[traffic];
      const int32_t* off = (const int32_t*)t->buffers[1];
      printf("C: traffic %.*s (%s)\n", (int)(off[1] - off[0]), (const char*)t->buffers[2] + off[0], schema.children[traffic]->format);
    }
  }
  array.release(&array);
  schema.release(&schema);
  if (array.release != NULL || schema.release != NULL) failed = 1;
  /* an unknown table is refused by name */
  if (fs_results_arrow(s, "nope", &schema, &array) != FS_ERROR || strstr(fs_last_error(), "flows") == NULL) failed = 1;
  fs_session_free(s);
  /* a message that waits for another: sent from the first's receiver, which hears of it at
   * once, it is released the instant the first completes */
  CHECK(fs_session_new(scenario, 1, &s));
  uint32_t first = 0, second = 0;
  CHECK(fs_send(s, 0, 5, 1 << 20, FS_NOW, 1, &first));
  CHECK(fs_send_after(s, 5, 9, 1 << 16, FS_NOW, 2, &first, 1, &second));
  uint32_t unknown = 1000;
  if (fs_send_after(s, 5, 9, 1, FS_NOW, 3, &unknown, 1, NULL) != FS_ERROR || strstr(fs_last_error(), "after") == NULL) failed = 1;
  CHECK(fs_run_until(s, 10000000000ULL));
  n = fs_completions(s, c, 4);
  if (n != 2 || c[0].id != first || c[1].id != second || c[1].start_ps != c[0].end_ps || c[1].tag != 2) failed = 1;
  printf("C: after: first ends at %" PRIu64 " ps, the second released at %" PRIu64 " ps\n", n ? c[0].end_ps : 0, n > 1 ? c[1].start_ps : 0);
  fs_session_free(s);
  return failed;
}
