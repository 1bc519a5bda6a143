/*
 * errors.h - the project's one error space: every module's range of
 * codes, and ck_strerror, which names any code of any module.
 *
 * THE CONVENTION
 *   A function that can fail returns int: 0 on success, a negative code
 *   otherwise. Each module's codes are an enum in its own header and its
 *   own ..._strerror names them. The codes of different modules never
 *   meet: each module owns a range of CK_ERR_WIDTH codes, so a code
 *   passed up through another module still says where it came from. No
 *   decision is ever taken from an error's text; callers compare codes.
 *
 * THE RANGES (this table is the one place they are written down)
 *
 *   range       module                 codes       strerror
 *   -101..-150  engine                 ENG_E*      eng_strerror     (engine/engine.h)
 *   -151..-200  egdb index             EGIX_E*     egix_strerror    (egdb/index.h)
 *   -201..-250  endgame databases      EGDB_E*     egdb_strerror    (egdb/egdb.h)
 *   -251..-300  (free)
 *   -301..-350  proven-node store      PST_E*      pst_strerror     (prover/store.h)
 *   -351..-400  admission              PADM_E*     padm_strerror    (prover/admit.h)
 *   -401..-450  df-pn                  DFPN_E*     dfpn_strerror    (prover/dfpn.h)
 *   -451..-500  alpha-beta             AB_E*       ab_strerror      (prover/search.h)
 *   -501..-550  solve (goals)          PRV_E*      prv_strerror     (prover/prover.h)
 *   -551..-600  (free)
 *   -601..-650  manager tree           MT_E*       mt_strerror      (manager/tree.h)
 *   -651..-700  (free)
 *   -701..-750  wire protocol          MGP_E*      mgp_strerror     (manager/protocol.h)
 *   -751..-800  web server             WEB_E*      web_strerror     (web/web.h)
 *
 *   A new module takes a free range and adds a line here and a row to
 *   errors.c's table (and its codes to ck_err_defined). A new code of a
 *   module follows its last one. tests/test_errors.c walks every range
 *   and fails if a code has no message, or if a module names a code the
 *   table does not know; two codes of the same value in different enums
 *   do not compile (ck_err_defined lists them all as case labels).
 *
 * WHY (issue 42)
 *   The protocol's MGP_E* and the web server's WEB_E* both used
 *   -701..-704, the protocol, solve and alpha-beta codes had no names,
 *   and manager.c printed an MGP_EFIELD code with the store's
 *   pst_strerror ("unknown store error"). The table above is what each
 *   module's header used to say on its own.
 *
 * WHERE IT SITS
 *   errors/ is the last module of the build (Makefile MODULES): it calls
 *   every module's strerror, so everything it names lies below it. The
 *   libraries therefore name their own codes with their own strerror
 *   (the module of such a code is certain); ck_strerror is for the
 *   command line, where a code may come from any module below. When the
 *   web server moves to a module of its own, errors/ stays above it.
 *
 * THREAD SAFETY
 *   No state: every function is safe from any thread; the strings are
 *   static.
 */
#ifndef ERRORS_ERRORS_H
#define ERRORS_ERRORS_H

#include <stddef.h>

/* ---- constants ------------------------------------------------------ */

#define CK_ERR_WIDTH 50 /* codes in one module's range */

/* ---- types ---------------------------------------------------------- */

/* One module's range: its codes run from first down to last (last <=
 * first, all defined), inside [first - CK_ERR_WIDTH + 1, first]. */
typedef struct ck_err_range {
    const char *module;            /* "engine", "proof store", ... */
    int first;                     /* the range's first code: -101, ... */
    int last;                      /* the module's last defined code */
    const char *(*name)(int code); /* the module's strerror */
} ck_err_range;

/* ---- functions ------------------------------------------------------ */

/*
 * ck_strerror - the message of any project code: the strerror of the
 * module whose range holds it (so the same text as that strerror gives),
 * "success" for 0, "unknown error code" for a code in no module's range
 * or positive. Never NULL; a static string.
 */
const char *ck_strerror(int code);

/* The module whose range holds code ("engine", ...; the table above), or
 * NULL for 0, a positive code, or a code in a free range. */
const char *ck_err_module(int code);

/* Nonzero when code is one a module defines today (a case label of one
 * switch, which is what makes two equal codes a compile error). */
int ck_err_defined(int code);

/* The table of ranges, in order (*n receives its length). */
const ck_err_range *ck_err_ranges(size_t *n);

#endif /* ERRORS_ERRORS_H */
