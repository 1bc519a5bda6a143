/*
 * errors.c - the table of every module's error range, and the one
 * dispatcher that names any code by its range (errors.h).
 *
 * The table is data, read-only and built at compile time. ck_strerror
 * does not know any message itself: it finds the range and asks the
 * module's own strerror, so a module's messages live in one place, next
 * to its code. ck_err_defined is the compile-time collision check: it
 * lists every code of every module as a case label of one switch, and a
 * C compiler refuses two equal case labels, so two modules can no longer
 * share a value (as MGP_E* and WEB_E* did, -701..-704) without the build
 * failing.
 */
#include "errors/errors.h"

#include "egdb/egdb.h"
#include "egdb/index.h"
#include "engine/engine.h"
#include "manager/protocol.h"
#include "manager/tree.h"
#include "web/web.h"
#include "prover/admit.h"
#include "prover/dfpn.h"
#include "prover/prover.h"
#include "prover/search.h"
#include "prover/store.h"

/* ---- static data ---------------------------------------------------- */

/* In the order of errors.h's table (descending codes). */
static const ck_err_range ranges[] = {
    {"engine", -101, ENG_ENOSPACE, eng_strerror},
    {"egdb index", -151, EGIX_ENAME, egix_strerror},
    {"endgame databases", -201, EGDB_EBUSY, egdb_strerror},
    {"proven-node store", -301, PST_ENOSPC, pst_strerror},
    {"admission", -351, PADM_ETOOMANY, padm_strerror},
    {"df-pn", -401, DFPN_EPROOF, dfpn_strerror},
    {"alpha-beta", -451, AB_EDB, ab_strerror},
    {"solve", -501, PRV_ESOLVER, prv_strerror},
    {"manager tree", -601, MT_ENOSPC, mt_strerror},
    {"wire protocol", -701, MGP_ENOSPC, mgp_strerror},
    {"web server", -751, WEB_ENOMEM, web_strerror},
};

#define NRANGES (sizeof ranges / sizeof ranges[0])

/*
 * Each module's first code opens its range, and its last one stays
 * inside it: checked here at compile time, so that a module that grows
 * past its CK_ERR_WIDTH codes fails the build instead of spilling into
 * its neighbour's range.
 */
#define CK_IN_RANGE(first, code) ((code) <= (first) && (code) > (first)-CK_ERR_WIDTH)
_Static_assert(ENG_EFEN == -101 && CK_IN_RANGE(-101, ENG_ENOSPACE), "engine range");
_Static_assert(EGIX_EINVAL == -151 && CK_IN_RANGE(-151, EGIX_ENAME), "egdb index range");
_Static_assert(EGDB_ENOTFOUND == -201 && CK_IN_RANGE(-201, EGDB_EBUSY), "egdb range");
_Static_assert(PST_EIO == -301 && CK_IN_RANGE(-301, PST_ENOSPC), "store range");
_Static_assert(PADM_EREFUSED == -351 && CK_IN_RANGE(-351, PADM_ETOOMANY), "admission range");
_Static_assert(DFPN_ENOMEM == -401 && CK_IN_RANGE(-401, DFPN_EPROOF), "df-pn range");
_Static_assert(AB_ENOMEM == -451 && CK_IN_RANGE(-451, AB_EDB), "alpha-beta range");
_Static_assert(PRV_ENOMEM == -501 && CK_IN_RANGE(-501, PRV_ESOLVER), "solve range");
_Static_assert(MT_EIO == -601 && CK_IN_RANGE(-601, MT_ENOSPC), "tree range");
_Static_assert(MGP_EAGAIN == -701 && CK_IN_RANGE(-701, MGP_ENOSPC), "protocol range");
_Static_assert(WEB_EINVAL == -751 && CK_IN_RANGE(-751, WEB_ENOMEM), "web range");

/* ---- functions ------------------------------------------------------ */

/* The range holding code, or NULL. A linear scan of eleven rows: only
 * error paths call it. */
static const ck_err_range *
range_of(int code)
{
    for (size_t i = 0; i < NRANGES; i++)
        if (CK_IN_RANGE(ranges[i].first, code))
            return &ranges[i];
    return NULL;
}

const char *
ck_strerror(int code)
{
    if (code == 0)
        return "success";
    const ck_err_range *r = range_of(code);
    return r ? r->name(code) : "unknown error code";
}

const char *
ck_err_module(int code)
{
    const ck_err_range *r = range_of(code);
    return r ? r->module : NULL;
}

const ck_err_range *
ck_err_ranges(size_t *n)
{
    *n = NRANGES;
    return ranges;
}

/* Every code of every module, one case label each. A value that two
 * enums share does not compile ("duplicate case value"). */
int
ck_err_defined(int code)
{
    switch (code) {
    case ENG_EFEN:
    case ENG_EMOVE:
    case ENG_EILLEGAL:
    case ENG_EAMBIG:
    case ENG_EOVERFLOW:
    case ENG_ENOSPACE:
    case EGIX_EINVAL:
    case EGIX_ENOMEM:
    case EGIX_ERANGE:
    case EGIX_ENOSPACE:
    case EGIX_ENAME:
    case EGDB_ENOTFOUND:
    case EGDB_EIO:
    case EGDB_ECORRUPT:
    case EGDB_ENOMEM:
    case EGDB_EINVAL:
    case EGDB_EMISSING:
    case EGDB_EINTERRUPT:
    case EGDB_EVERIFY:
    case EGDB_ECAPTURE:
    case EGDB_EBUSY:
    case PST_EIO:
    case PST_EVERSION:
    case PST_ECORRUPT:
    case PST_ENOTFOUND:
    case PST_ECONTRADICT:
    case PST_ENOMEM:
    case PST_EINVAL:
    case PST_EREADONLY:
    case PST_ENOSPC:
    case PADM_EREFUSED:
    case PADM_EBADRECORD:
    case PADM_ECONTRADICT:
    case PADM_EOUTSIDE:
    case PADM_ENOROOT:
    case PADM_ETOOMANY:
    case DFPN_ENOMEM:
    case DFPN_EINVAL:
    case DFPN_EDB:
    case DFPN_ESTORE:
    case DFPN_EPROOF:
    case AB_ENOMEM:
    case AB_EINVAL:
    case AB_EDB:
    case PRV_ENOMEM:
    case PRV_EINVAL:
    case PRV_ESOLVER:
    case MT_EIO:
    case MT_ECORRUPT:
    case MT_ENOMEM:
    case MT_EINVAL:
    case MT_ESTORE:
    case MT_EDB:
    case MT_EREFUSED:
    case MT_EOLD:
    case MT_ENOSPC:
    case MGP_EAGAIN:
    case MGP_EFRAME:
    case MGP_EFIELD:
    case MGP_ENOSPC:
    case WEB_EINVAL:
    case WEB_ENOTOKEN:
    case WEB_EBIND:
    case WEB_ENOMEM:
        return 1;
    default:
        return 0;
    }
}
