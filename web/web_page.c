/*
 * web_page.c - the proof browser's HTML pages (web.h is the manual): the
 * overview with its SVG charts, the browser (a page that loads each
 * position's moves from /api/node), and the form that asks for a token.
 *
 * The charts are drawn here, on the server, as inline SVG: the overview
 * then works without its script, reloads itself whole on a running
 * proof, and needs nothing from elsewhere. Every chart has a title, axis
 * titles, ticks with numbers on both axes, and its legend outside the
 * plot. Proof and disproof numbers span many powers of ten and can be 0
 * or infinite: their axis is log10(1 + n), ticked at 0, 1, 10, 100 ...,
 * with a band at the top for infinity (drawn and labelled ∞).
 *
 * OWNS: the published openings read once for the browser's picker
 *   (web_server.ops); nothing else between requests.
 * CALLS: web_api.c (a position's status, the proving move, the leaves),
 *   web_text.c (escaping), the tree's history and figures (tree.h) and
 *   openings/ (ops_load). Called by web.c only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "web/web_internal.h"
#include "prover/prover.h"

/* ---- constants -------------------------------------------------------- */

#define CH_W 780  /* chart width */
#define CH_H 250  /* chart height */
#define CH_L 78   /* plot left (y ticks and the y title) */
#define CH_R 560  /* plot right (the legend beyond) */
#define CH_T 34   /* plot top (the title above) */
#define CH_B 200  /* plot bottom (x ticks and the x title below) */
#define CH_INF 14 /* the band for infinity at the top of a log axis */
#define CH_POINTS 1000

/* ---- types ------------------------------------------------------------ */

typedef struct series {
    const char *name, *color;
    const double *x, *y; /* y: NAN a gap, INFINITY the top band (log axes) */
    size_t n;
    int step; /* a value holds until the next sample */
} series;

/* The persisted history, thinned to at most CH_POINTS samples, on one
 * time axis over all runs. */
typedef struct hist {
    size_t total, every, i, n;
    double last_s, offset;
    double x[CH_POINTS + 1], pn[CH_POINTS + 1], dn[CH_POINTS + 1], nodes[CH_POINTS + 1];
    double jobs[CH_POINTS + 1], settled[CH_POINTS + 1];
    double jpm[CH_POINTS + 1], spm[CH_POINTS + 1];
} hist;

/* ---- numbers as text ----------------------------------------------------- */

/* 1234567 -> "1.2M", 20000 -> "20k". */
static void
short_num(double v, char *buf, size_t cap)
{
    double a = fabs(v);
    if (a >= 1e9)
        snprintf(buf, cap, "%gG", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, cap, "%gM", v / 1e6);
    else if (a >= 1e4)
        snprintf(buf, cap, "%gk", v / 1e3);
    else
        snprintf(buf, cap, "%g", v);
}

/* A tick step of 1, 2 or 5 times a power of ten, for about n ticks. */
static double
nice_step(double span, int n)
{
    double raw = span / n, p = pow(10, floor(log10(raw > 0 ? raw : 1)));
    double f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/* ---- charts --------------------------------------------------------------- */

/*
 * One chart: title above, plot in [CH_L, CH_R] x [CH_T, CH_B], y ticks
 * and numbers left of it with the y title turned along the axis, x
 * ticks and numbers below with the x title, the legend right of the plot
 * (a legend inside it hid the lines it named). Time is shown in the unit
 * that keeps its numbers small (seconds up to 3 minutes, then minutes,
 * hours, days), ticked at 1-2-5 steps. A linear y axis starts at 0 (a
 * count or a rate), so its lines compare by height; the log axis is
 * described at the top of this file. A series with no point at all
 * leaves the axes with a note in the plot saying why it is empty.
 */

/* One tick of a chart's y axis at pixel y: its grid line, its mark and
 * value v. */
static void
y_tick(struct evbuffer *b, double v, double y)
{
    char t[32];
    short_num(v, t, sizeof t);
    evbuffer_add_printf(b,
                        "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#e4e4e4'/>"
                        "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#000'/>"
                        "<text x='%d' y='%.1f' font-size='11' text-anchor='end'>%s</text>\n",
                        CH_L, y, CH_R, y, CH_L - 5, y, CH_L, y, CH_L - 8, y + 4, t);
}

/* A chart's scales, worked out from its series before anything is drawn. */
typedef struct axes {
    int ylog;         /* the y axis is log10(1 + v), with a band for infinity */
    int has_inf;      /* some y is infinite (the band is drawn) */
    size_t finite;    /* y values that are numbers */
    double top;       /* the plot's top for finite values (below the band) */
    double lmax;      /* log axis: its top, in powers of ten */
    double ymax;      /* linear axis: its top, a whole number of ysteps */
    double ystep;     /* linear axis: the tick step */
    const char *unit; /* the time unit of the x axis */
    double div;       /* seconds in that unit */
    double xm;        /* the x axis' span in that unit (at least 1) */
} axes;

/* The pixel row of v, and the pixel column of x seconds. */
static double
ypix(const axes *a, double v)
{
    return isinf(v)  ? CH_T + CH_INF / 2.0
           : a->ylog ? CH_B - (CH_B - a->top) * log10(1 + v) / (a->lmax > 0 ? a->lmax : 1)
                     : CH_B - (CH_B - a->top) * v / a->ymax;
}

static double
xpix(const axes *a, double x)
{
    return CH_L + (CH_R - CH_L) * (x / a->div) / a->xm;
}

/* The scales of a chart over xmax seconds showing the ns series s. */
static void
chart_axes(axes *a, int ylog, double xmax, const series *s, size_t ns)
{
    memset(a, 0, sizeof *a);
    a->ylog = ylog;
    /* the time unit */
    a->unit = "seconds";
    a->div = 1;
    if (xmax > 3 * 86400)
        a->unit = "days", a->div = 86400;
    else if (xmax > 3 * 3600)
        a->unit = "hours", a->div = 3600;
    else if (xmax > 180)
        a->unit = "minutes", a->div = 60;
    a->xm = xmax / a->div > 0 ? xmax / a->div : 1;
    /* the y range */
    double ymax = 0;
    for (size_t k = 0; k < ns; k++)
        for (size_t i = 0; i < s[k].n; i++) {
            double y = s[k].y[i];
            if (isinf(y))
                a->has_inf = 1;
            else if (!isnan(y)) {
                a->finite++;
                ymax = y > ymax ? y : ymax;
            }
        }
    a->top = CH_T + (ylog && a->has_inf ? CH_INF + 14 : 0);
    a->lmax = ylog ? ceil(log10(1 + (ymax > 1 ? ymax : 1))) : 0;
    a->ystep = 1;
    if (!ylog) {
        a->ystep = nice_step(ymax > 0 ? ymax : 1, 5);
        ymax = ceil((ymax > 0 ? ymax : 1) / a->ystep) * a->ystep;
    }
    a->ymax = ymax;
}

/* The chart's frame: the SVG element, its title, the y ticks (and the
 * band for infinity), the x ticks, the axes and their titles. */
static void
chart_frame(struct evbuffer *b, const axes *a, const char *title, const char *ytitle)
{
    evbuffer_add_printf(b,
                        "<svg class='chart' xmlns='http://www.w3.org/2000/svg' width='%d' "
                        "height='%d' viewBox='0 0 %d %d' role='img'><title>",
                        CH_W, CH_H, CH_W, CH_H);
    web_html(b, title);
    evbuffer_add_printf(b,
                        "</title><rect width='%d' height='%d' fill='#fff'/>"
                        "<text x='%d' y='18' font-size='14' font-weight='bold'>",
                        CH_W, CH_H, CH_L);
    web_html(b, title);
    evbuffer_add_printf(b, "</text>\n");
    /* y ticks, grid lines and numbers */
    if (a->ylog) {
        for (int e = -1; e <= (int)a->lmax; e++) {
            double v = e < 0 ? 0 : pow(10, e);
            y_tick(b, v, ypix(a, v));
        }
        if (a->has_inf)
            evbuffer_add_printf(b,
                                "<rect x='%d' y='%d' width='%d' height='%d' fill='#f6f0f0'/>"
                                "<text x='%d' y='%d' font-size='13' text-anchor='end'>∞</text>\n",
                                CH_L, CH_T, CH_R - CH_L, CH_INF, CH_L - 8, CH_T + CH_INF - 3);
    } else {
        for (double v = 0; v <= a->ymax + a->ystep / 2; v += a->ystep) {
            y_tick(b, v, ypix(a, v));
        }
    }
    /* x ticks */
    double xstep = nice_step(a->xm, 6);
    for (double v = 0; v <= a->xm + xstep / 1000; v += xstep) {
        double x = CH_L + (CH_R - CH_L) * v / a->xm;
        evbuffer_add_printf(b,
                            "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#000'/>"
                            "<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%g</text>\n",
                            x, CH_B, x, CH_B + 5, x, CH_B + 18, v);
    }
    /* axes and their titles */
    evbuffer_add_printf(b,
                        "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#000'/>"
                        "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#000'/>"
                        "<text x='%d' y='%d' font-size='12' text-anchor='middle'>time proving "
                        "(%s)</text>"
                        "<text transform='translate(16 %d) rotate(-90)' font-size='12' "
                        "text-anchor='middle'>",
                        CH_L, CH_B, CH_R, CH_B, CH_L, CH_T, CH_L, CH_B, (CH_L + CH_R) / 2,
                        CH_H - 14, a->unit, (CH_T + CH_B) / 2);
    web_html(b, ytitle);
    evbuffer_add_printf(b, "</text>\n");
}

/* The series as lines (a NaN breaks a line; a step series holds each
 * value until the next), the latest value of each marked, and the
 * legend beside the plot. */
static void
chart_series(struct evbuffer *b, const axes *a, const series *s, size_t ns)
{
    for (size_t k = 0; k < ns; k++) {
        int open = 0;
        double py = 0, lx = -1, lyy = 0;
        for (size_t i = 0; i < s[k].n; i++) {
            double y = s[k].y[i];
            if (isnan(y)) {
                if (open)
                    evbuffer_add_printf(b, "'/>\n");
                open = 0;
                continue;
            }
            double x = xpix(a, s[k].x[i]), yy = ypix(a, y);
            if (!open) /* the first one wide and solid, the others thin and dashed:
                          where two lines coincide (workers and jobs in flight, most of
                          a run) both stay seen */
                evbuffer_add_printf(b,
                                    "<polyline fill='none' stroke='%s' stroke-width='%.1f'%s "
                                    "points='",
                                    s[k].color, k ? 2.0 : 4.5, k ? " stroke-dasharray='7 4'" : "");
            else if (s[k].step)
                evbuffer_add_printf(b, "%.1f,%.1f ", x, py);
            evbuffer_add_printf(b, "%.1f,%.1f ", x, yy);
            open = 1;
            py = yy;
            lx = x, lyy = yy;
        }
        if (open)
            evbuffer_add_printf(b, "'/>\n");
        if (lx >= 0) /* the latest value, marked (a single sample is a dot) */
            evbuffer_add_printf(b, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n", lx, lyy,
                                s[k].color);
        int ly = CH_T + 10 + 20 * (int)k;
        evbuffer_add_printf(
            b,
            "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='%s'%s/>"
            "<text x='%d' y='%d' font-size='12'>",
            CH_R + 16, ly, CH_R + 40, ly, s[k].color, k ? "2" : "4.5",
            k ? " stroke-dasharray='7 4'" : "", CH_R + 46, ly + 4);
        web_html(b, s[k].name);
        evbuffer_add_printf(b, "</text>\n");
    }
}

/* One chart (see above): its scales, its frame, its series; a chart
 * with no point at all says why in its plot (empty). */
static void
chart(struct evbuffer *b, const char *title, const char *ytitle, int ylog, double xmax,
      const series *s, size_t ns, const char *empty)
{
    axes a;
    chart_axes(&a, ylog, xmax, s, ns);
    chart_frame(b, &a, title, ytitle);
    chart_series(b, &a, s, ns);
    if (!a.finite && !a.has_inf && empty) {
        evbuffer_add_printf(b, "<text x='%d' y='%d' font-size='12' fill='#666'>", CH_L + 14,
                            (CH_T + CH_B) / 2);
        web_html(b, empty);
        evbuffer_add_printf(b, "</text>\n");
    }
    evbuffer_add_printf(b, "</svg>\n");
}

static void
hist_count(double s, uint64_t pn, uint64_t dn, uint64_t nodes, uint64_t jobs, uint64_t proved,
           int bound, void *arg)
{
    (void)s, (void)pn, (void)dn, (void)nodes, (void)jobs, (void)proved, (void)bound;
    ((hist *)arg)->total++;
}

static double
pn_value(uint64_t v)
{
    return v >= MT_INF ? INFINITY : (double)v;
}

/* A row of the stored history: every `every`-th is kept (and the last,
 * so that the chart ends where the proof stands). A rate is the change
 * from the row kept before, per minute of proving; across a restart the
 * time axis goes on (offset), and the counters, which are stored, too. */
static void
hist_take(double s, uint64_t pn, uint64_t dn, uint64_t nodes, uint64_t jobs, uint64_t proved,
          int bound, void *arg)
{
    (void)bound;
    hist *h = arg;
    if (s < h->last_s) /* a new run: its clock starts again at 0 */
        h->offset += h->last_s;
    h->last_s = s;
    size_t i = h->i++;
    if (i % h->every && i + 1 != h->total) /* thinned, but always the last one */
        return;
    if (h->n > CH_POINTS)
        return;
    size_t k = h->n++;
    h->x[k] = h->offset + s;
    h->pn[k] = pn_value(pn);
    h->dn[k] = pn_value(dn);
    h->nodes[k] = (double)nodes;
    h->jobs[k] = (double)jobs;
    h->settled[k] = (double)proved;
    h->jpm[k] = h->spm[k] = NAN;
    if (k > 0 && h->x[k] > h->x[k - 1] && h->jobs[k] >= h->jobs[k - 1]) {
        double dt = h->x[k] - h->x[k - 1];
        h->jpm[k] = (h->jobs[k] - h->jobs[k - 1]) * 60 / dt;
        h->spm[k] = (h->settled[k] - h->settled[k - 1]) * 60 / dt;
    }
}

/* The overview's charts: three from the stored history (every run of
 * the proof), two from this run's samples on a running manager. */
static void
charts(web_server *w, struct evbuffer *b)
{
    hist *h = calloc(1, sizeof *h);
    if (!h)
        return;
    mt_history(w->tree, hist_count, h);
    h->every = h->total > CH_POINTS ? (h->total + CH_POINTS - 1) / CH_POINTS : 1;
    mt_history(w->tree, hist_take, h);
    double xmax = h->n ? h->x[h->n - 1] : 0;
    const char *none = "no samples yet: the manager keeps one every 10 s";
    series s1[2] = {{"proof number", "#c0392b", h->x, h->pn, h->n, 0},
                    {"disproof number", "#2471a3", h->x, h->dn, h->n, 0}};
    chart(b, "The root's proof and disproof numbers", "pn, dn (log scale)", 1, xmax, s1, 2, none);
    series s2[2] = {{"jobs answered", "#229954", h->x, h->jpm, h->n, 0},
                    {"jobs that settled their leaf", "#8e44ad", h->x, h->spm, h->n, 0}};
    chart(b, "Jobs a minute", "jobs a minute", 0, xmax, s2, 2, "two samples are needed for a rate");
    series s3[1] = {{"positions in the tree", "#7f8c8d", h->x, h->nodes, h->n, 0}};
    chart(b, "The tree's size", "positions", 0, xmax, s3, 1, none);
    free(h);
    if (!w->run) {
        evbuffer_add_printf(b, "<p class='note'>Workers and the threshold h over time are charted "
                               "while a manager runs: see its <code>--status-port</code> "
                               "page.</p>\n");
        return;
    }
    size_t n = w->npts;
    double *x = malloc((n + 1) * sizeof *x), *k = malloc((n + 1) * sizeof *k);
    double *hh = malloc((n + 1) * sizeof *hh), *fl = malloc((n + 1) * sizeof *fl);
    if (x && k && hh && fl) {
        for (size_t i = 0; i < n; i++) {
            x[i] = w->pts[i].t;
            k[i] = w->pts[i].workers;
            fl[i] = w->pts[i].in_flight;
            hh[i] = w->pts[i].h < 0 ? NAN : w->pts[i].h;
        }
        double xm = n ? x[n - 1] : 0;
        series s4[2] = {{"workers connected", "#d35400", x, k, n, 1},
                        {"jobs in flight", "#16a085", x, fl, n, 1}};
        chart(b, "Workers (this run)", "workers, jobs", 0, xm, s4, 2, none);
        series s5[1] = {{"threshold h", "#34495e", x, hh, n, 1}};
        chart(b, "The threshold h (this run)", "h (hundredths of a man)", 0, xm, s5, 1,
              "no threshold: nothing is provisional");
    }
    free(x);
    free(k);
    free(hh);
    free(fl);
}

/* ---- the overview ---------------------------------------------------------------- */

static const char style[] =
    "<style>body{font-family:system-ui,sans-serif;margin:1.2em 2em;color:#222;max-width:80em}"
    "h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}"
    "code{font-size:.95em}table{border-collapse:collapse;margin:.4em 0}"
    "td,th{padding:3px 9px;text-align:right;border-bottom:1px solid #eee}th{background:#f2f2f2}"
    "td.l,th.l{text-align:left}tr.proving td{background:#e8f6e8;font-weight:600}"
    ".note{color:#555;font-size:.92em}.chart{display:block;margin:.6em 0;border:1px solid #ddd}"
    "dl{display:grid;grid-template-columns:max-content auto;gap:.25em 1em}dt{color:#555}"
    "dd{margin:0}a{color:#1f5fa8}.bad{color:#b03a2e;font-weight:600}"
    ".good{color:#1e7b34;font-weight:600}nav a,nav span{margin-right:1.2em}</style>\n";

static void
pn_cell(struct evbuffer *b, uint64_t v)
{
    if (v >= MT_INF)
        evbuffer_add_printf(b, "∞");
    else
        evbuffer_add_printf(b, "%" PRIu64, v);
}

static void
fen_link(struct evbuffer *b, const eng_pos *p, const char *line, const char *text)
{
    char fen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    evbuffer_add_printf(b, "<a href='/tree?fen=");
    web_url(b, fen);
    if (line) {
        evbuffer_add_printf(b, "&amp;line=");
        web_url(b, line);
    }
    evbuffer_add_printf(b, "'>");
    web_html(b, text ? text : fen);
    evbuffer_add_printf(b, "</a>");
}

/* The value column: proven, provisional, or open. A provisional flag
 * is the question's (tree.h, THRESHOLD ITERATION: pn 0 when the
 * attacker's score is past h, dn 0 when it is below -h), whichever side
 * moves at the position, so it is written with the attacker's name and
 * never turned for the mover: before, the root's moves turned it, and a
 * move with pn ∞, dn 0 read "counted proven". */
static void
value_cell(struct evbuffer *b, const web_status *s, const char *word, int h, int attacker)
{
    if (s->bound != ENG_LW && strcmp(word, "unknown"))
        evbuffer_add_printf(b, "%s", word);
    else if (s->provisional > 0)
        evbuffer_add_printf(b, "open: counted proven for %s (%s's score past h = %d)",
                            web_side(attacker), web_side(attacker), h);
    else if (s->provisional < 0)
        evbuffer_add_printf(b, "open: counted disproven for %s (%s's score below −h = %d)",
                            web_side(attacker), web_side(attacker), -h);
    else
        evbuffer_add_printf(b, "open");
}

/* The root's moves as the browser shows them (web_api.c computes the
 * same statuses), in move order, values and scores from the mover's
 * side: a child's value is for its own side to move, negated here. */
static void
root_moves(web_server *w, struct evbuffer *b)
{
    web_status rs;
    web_status_of(w, &w->root, &rs);
    eng_move pm;
    char pmtext[ENG_MOVE_STR_MAX] = "";
    if (web_proving_move(w, &rs, &pm))
        eng_format_move(&pm, pmtext, sizeof pmtext);
    const char *mover = web_side(w->root.stm);
    evbuffer_add_printf(b,
                        "<table><tr><th class='l'>move</th><th class='l'>value for %s</th>"
                        "<th class='l'>checked</th><th>pn</th><th>dn</th><th>score for %s</th>"
                        "<th>jobs</th><th>in flight</th></tr>\n",
                        mover, mover);
    eng_movelist ml;
    eng_generate(&w->root, &ml, ENG_DUPS_MERGE);
    for (int i = 0; i < ml.n; i++) {
        char mv[ENG_MOVE_STR_MAX], txt[300];
        eng_pos c;
        web_status s;
        eng_make(&w->root, &ml.m[i], &c);
        eng_format_move(&ml.m[i], mv, sizeof mv);
        web_status_of(w, &c, &s);
        evbuffer_add_printf(b, "<tr%s><td class='l'>",
                            !strcmp(mv, pmtext) ? " class='proving'" : "");
        fen_link(b, &c, mv, mv);
        evbuffer_add_printf(b, "%s</td><td class='l'>", !strcmp(mv, pmtext) ? " ★" : "");
        value_cell(b, &s, prv_bound_word(eng_bound_neg(s.bound)), w->st.h, w->st.q.attacker);
        evbuffer_add_printf(b, "</td><td class='l'>%s</td><td>", s.checked);
        if (s.in_tree) {
            pn_cell(b, s.v.pn);
            evbuffer_add_printf(b, "</td><td>");
            pn_cell(b, s.v.dn);
            web_score_text(-s.v.score, mover, txt, sizeof txt);
            evbuffer_add_printf(b, "</td><td title='");
            web_html(b, txt);
            evbuffer_add_printf(b, "'>%+d</td><td>%u</td><td>%s</td></tr>\n", -s.v.score, s.v.jobs,
                                s.v.in_flight ? "yes" : "");
        } else {
            evbuffer_add_printf(b, "–</td><td>–</td><td></td><td></td><td></td></tr>\n");
        }
    }
    evbuffer_add_printf(b, "</table>\n<p class='note'>pn and dn are the proof and disproof "
                           "numbers of the question (∞: it cannot be proven, resp. disproven, "
                           "there). The score is the heuristic of alpha-beta in hundredths of a "
                           "man, from the mover's side (hover for its meaning); scores beyond "
                           "±29488 are proven wins and losses. ★ the move the proof takes.</p>\n");
}

/* The leaves in flight come from the workers (a running manager knows
 * each one's job, its time and budget); without a manager, from the
 * tree's flags (none once a manager stopped: flags are not stored). */
static void
leaves_tables(web_server *w, struct evbuffer *b)
{
    mt_view hard[20], fly[64];
    size_t nhard;
    size_t nfly = web_leaves(w, hard, 20, &nhard, fly, 64);
    const web_run *r = &w->scratch;
    evbuffer_add_printf(b, "<h2>Leaves in flight</h2>\n");
    size_t shown = 0;
    if (w->run) {
        evbuffer_add_printf(b, "<table><tr><th class='l'>position</th><th class='l'>worker</th>"
                               "<th>job</th><th>running s</th><th>budget s</th></tr>\n");
        for (size_t i = 0; i < r->nworkers && i < WEB_MAX_WORKERS; i++) {
            const web_worker *k = &r->workers[i];
            if (!k->has_job)
                continue;
            evbuffer_add_printf(b, "<tr><td class='l'>");
            fen_link(b, &k->job_pos, NULL, NULL);
            evbuffer_add_printf(b, "</td><td class='l'>");
            web_html(b, k->name);
            evbuffer_add_printf(b, "</td><td>%" PRIu64 "</td><td>%.1f</td><td>%.1f</td></tr>\n",
                                k->job_id, k->job_s, k->job_budget_ms / 1000.0);
            shown++;
        }
        evbuffer_add_printf(b, "</table>\n");
    }
    if (!shown && nfly) {
        evbuffer_add_printf(b, "<ul>");
        for (size_t i = 0; i < nfly && i < 64; i++) {
            evbuffer_add_printf(b, "<li>");
            fen_link(b, &fly[i].pos, NULL, NULL);
            evbuffer_add_printf(b, "</li>");
        }
        evbuffer_add_printf(b, "</ul>\n");
    } else if (!shown) {
        evbuffer_add_printf(b, "<p class='note'>none%s</p>\n",
                            w->run ? "" : " (jobs are in flight only while a manager runs)");
    }
    evbuffer_add_printf(b, "<h2>The hardest open leaves</h2>\n<p class='note'>Leaves the question "
                           "is still open at, most job time first. Every open leaf has pn = dn = 1 "
                           "(tree.h), so they are ranked by the work they resisted.</p>\n");
    if (!nhard) {
        evbuffer_add_printf(b, "<p class='note'>none%s</p>\n",
                            mt_goal_settled(w->st.goal, w->st.root_bound)
                                ? ": the proof is settled, no leaf is open"
                                : "");
        return;
    }
    evbuffer_add_printf(
        b, "<table><tr><th class='l'>position</th><th>jobs</th><th>job s</th>"
           "<th>df-pn positions</th><th>score (side to move)</th><th>pn</th><th>dn</th></tr>\n");
    for (size_t i = 0; i < nhard; i++) {
        char txt[300];
        evbuffer_add_printf(b, "<tr><td class='l'>");
        fen_link(b, &hard[i].pos, NULL, NULL);
        web_score_text(hard[i].score, web_side(hard[i].pos.stm), txt, sizeof txt);
        evbuffer_add_printf(b, "</td><td>%u</td><td>%.1f</td><td>%" PRIu64 "</td><td title='",
                            hard[i].jobs, hard[i].job_ms / 1000.0, hard[i].job_nodes);
        web_html(b, txt);
        evbuffer_add_printf(b, "'>%+d</td><td>", hard[i].score);
        pn_cell(b, hard[i].pn);
        evbuffer_add_printf(b, "</td><td>");
        pn_cell(b, hard[i].dn);
        evbuffer_add_printf(b, "</td></tr>\n");
    }
    evbuffer_add_printf(b, "</table>\n");
}

/* A running manager's workers, each with its job. */
static void
workers_table(web_server *w, struct evbuffer *b)
{
    const web_run *r = &w->scratch;
    evbuffer_add_printf(b, "<h2>Workers</h2><table><tr><th>id</th><th class='l'>name</th>"
                           "<th class='l'>address</th><th>job</th><th>jobs done</th>"
                           "<th>connected s</th></tr>\n");
    for (size_t i = 0; i < r->nworkers && i < WEB_MAX_WORKERS; i++) {
        const web_worker *k = &r->workers[i];
        evbuffer_add_printf(b, "<tr><td>%u</td><td class='l'>", k->id);
        web_html(b, k->name);
        evbuffer_add_printf(b, "</td><td class='l'>");
        web_html(b, k->addr);
        evbuffer_add_printf(b, "</td><td>");
        if (k->has_job)
            evbuffer_add_printf(b, "%" PRIu64, k->job_id);
        evbuffer_add_printf(b, "</td><td>%" PRIu64 "</td><td>%.0f</td></tr>\n", k->jobs_done,
                            k->connected_s);
    }
    evbuffer_add_printf(b, "</table>\n");
    if (r->nworkers > WEB_MAX_WORKERS)
        evbuffer_add_printf(b, "<p class='note'>and %zu more</p>\n", r->nworkers - WEB_MAX_WORKERS);
}

void
web_page_overview(web_server *w, struct evbuffer *b)
{
    const mt_stats *s = &w->st;
    const web_run *r = &w->scratch;
    int settled = mt_goal_settled(s->goal, s->root_bound);
    evbuffer_add_printf(b, "<!doctype html><html lang='en'><head><meta charset='utf-8'>");
    if (w->run)
        evbuffer_add_printf(b, "<meta http-equiv='refresh' content='10'>");
    evbuffer_add_printf(b, "<title>proof of %s</title>%s</head><body>\n", s->root_fen, style);
    /* the proof's PDN only once something is proven at the root: before
     * that the link could only answer 404 */
    evbuffer_add_printf(b,
                        "<nav><a href='/tree'>Browse the proof tree</a><a "
                        "href='/api/status'>status JSON</a>%s<a href='/export/subtree.json'>the "
                        "tree as JSON</a></nav>\n<h1>Proof of <code>%s</code></h1>\n<dl>\n",
                        s->root_bound != ENG_LW
                            ? "<a href='/export/proof.pdn'>the proof as PDN</a>"
                            : "<span class='note'>(no proof to export yet)</span>",
                        s->root_fen);
    evbuffer_add_printf(b, "<dt>goal</dt><dd>%s, for %s (to move at the root)</dd>\n",
                        mt_goal_name(s->goal), web_side(w->root.stm));
    evbuffer_add_printf(b, "<dt>result</dt><dd class='%s'>%s for %s (%s)</dd>\n",
                        settled ? "good" : "", prv_bound_word(s->root_bound), web_side(w->root.stm),
                        settled ? "settled" : "not settled yet");
    evbuffer_add_printf(b, "<dt>checker</dt><dd class='%s'>",
                        w->root_checked == 0   ? "bad"
                        : w->root_checked == 1 ? "good"
                                               : "");
    if (w->check_text[0])
        web_html(b, w->check_text);
    else
        evbuffer_add_printf(b, "%s",
                            w->run ? "the manager runs the checker over the root's "
                                     "whole proof once it is settled"
                                   : "not run");
    evbuffer_add_printf(b,
                        "</dd>\n<dt>question now</dt><dd>does %s %s? (pn counts what is "
                        "left to prove yes, dn to prove no)</dd>\n",
                        s->q.attacker == ENG_BLACK ? "Black" : "White",
                        s->q.target == ENG_WIN ? "win" : "at least draw");
    evbuffer_add_printf(b, "<dt>root pn, dn</dt><dd>");
    pn_cell(b, s->root_pn);
    evbuffer_add_printf(b, ", ");
    pn_cell(b, s->root_dn);
    evbuffer_add_printf(b, "</dd>\n<dt>threshold h</dt><dd>");
    if (s->h >= MT_H_INF)
        evbuffer_add_printf(b, "none: nothing is provisional any more");
    else
        evbuffer_add_printf(b,
                            "%d (hundredths of a man): a leaf whose score is beyond ±%d counts "
                            "as provisionally decided; h rises when the root is decided only "
                            "provisionally, so that no answer rests on a score",
                            s->h, s->h);
    evbuffer_add_printf(b,
                        "</dd>\n<dt>tree</dt><dd>%" PRIu64 " positions, %" PRIu64
                        " expanded, %" PRIu64 " leaves proven by workers, %" PRIu64
                        " in flight</dd>\n",
                        s->nodes, s->expanded, s->leaves_proven, s->in_flight);
    evbuffer_add_printf(b,
                        "<dt>jobs</dt><dd>%" PRIu64 " issued, %" PRIu64 " answered, %" PRIu64
                        " settled their leaf",
                        s->jobs_issued, s->jobs_done, s->jobs_proved);
    if (w->run)
        evbuffer_add_printf(b, "; %.1f answered in the last minute; %zu workers connected",
                            r->per_minute, r->nworkers);
    evbuffer_add_printf(b, "</dd>\n<dt>time</dt><dd>");
    if (w->run)
        evbuffer_add_printf(b, "this run %.0f s, ", r->run_s);
    evbuffer_add_printf(b, "%.0f s of manager time over all runs</dd>\n",
                        s->seconds + (w->run ? r->unsaved_s : 0.0));
    char scope[48];
    egdb_scope_name(s->db_pieces, scope, sizeof scope);
    evbuffer_add_printf(b, "<dt>databases</dt><dd>%s pieces</dd>\n<dt>state</dt><dd><code>", scope);
    web_html(b, w->state);
    evbuffer_add_printf(b, "</code>%s</dd></dl>\n",
                        w->run ? " (a running manager: this page reloads every 10 s)" : "");
    evbuffer_add_printf(b, "<h2>Progress</h2>\n");
    charts(w, b);
    evbuffer_add_printf(b, "<h2>The root's moves</h2>\n");
    root_moves(w, b);
    leaves_tables(w, b);
    if (w->run)
        workers_table(w, b);
    evbuffer_add_printf(b, "</body></html>\n");
}

/* ---- the browser --------------------------------------------------------------------- */

/*
 * The browser. The script keeps the answer of /api/node for the shown
 * position (d) and redraws everything from it: the summary, the line
 * (each move a link to its prefix), the board (an SVG drawn from the
 * masks, the chosen or hovered move's squares outlined and its captures
 * crossed, square numbers when asked), the position's panel and the
 * table of moves (the proving one marked). go() fetches another
 * position and pushes its address (fen and line) on the history, so
 * that back and forward (popstate) and shared addresses work; the keys
 * call the same functions. On a running proof it fetches the shown
 * position again every 10 s while the tab is visible. Text from the
 * answer is always escaped before it goes into the page.
 */
/* The page: its own style and script, the first position's JSON inline
 * (so that the page shows it at once, without a second request), and
 * then each position's moves on demand from /api/node. */
static const char tree_head[] =
    "<!doctype html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='wi"
    "dth=device-width,initial-scale=1'><title>";

/* after the title (the position's FEN, escaped) */
static const char tree_head2[] =
    "</title><style>body{font-family:system-ui,sans-serif;margin:1em 1.6em;color:#222}nav a,nav b"
    "utton{margin-right:1em}h1{font-size:1.25em;margin:.4em 0}#summary{color:#444;margin:.3em 0 ."
    "8em}#line{margin:.5em 0;line-height:1.8}#line a{white-space:nowrap;padding:1px 4px;border-ra"
    "dius:3px;text-decoration:none;color:#1f5fa8}#line a.here{background:#1f5fa8;color:#fff}#line"
    " .num{color:#888;margin-left:.3em}#line .mv{white-space:nowrap}#main{display:flex;flex-wrap:"
    "wrap;gap:1.5em;align-items:flex-start}#pos{flex:1 1 22em;max-width:42em}#pos dl{display:grid"
    ";grid-template-columns:max-content auto;gap:.2em .9em;margin:0}#pos dt{color:#555}#pos dd{ma"
    "rgin:0}table{border-collapse:collapse}td,th{padding:3px 8px;text-align:right;border-bottom:1"
    "px solid #eee}th{background:#f2f2f2;position:sticky;top:0}td.l,th.l{text-align:left}tbody tr"
    "{cursor:pointer}tbody tr:hover td{background:#f4f8fd}tr.proving td{background:#e3f5e3;font-w"
    "eight:600}tr.sel td{outline:2px solid #1f5fa8;outline-offset:-2px}.note{color:#555;font-size"
    ":.9em}.err{color:#b03a2e;font-weight:600}.win{color:#1e7b34}.loss{color:#b03a2e}a{color:#1f5"
    "fa8}#tools{margin:.5em 0;display:flex;flex-wrap:wrap;gap:.4em 1.2em;align-items:center}#tool"
    "s input[type=text]{width:24em}#endline{margin:.2em 0 .6em}kbd{border:1px solid #bbb;border-r"
    "adius:3px;padding:0 4px;font-size:.85em}</style></head><body>\n"
    "<nav><a href='/'>Overview</a><a id='toroot' href='/tree'>Root</a><button id='up' title='up o"
    "ne move (←)'>↑ up</button><label><input type='checkbox' id='nums'> square numbers (<kbd>n</k"
    "bd>)</label><label><input type='checkbox' id='flip'> flip the board (<kbd>f</kbd>)</label></"
    "nav>\n"
    "<div id='tools'><form id='gotoform'><label>go to <input type='text' id='goto' placeholder='a"
    " FEN, or moves from the root: 11-15 23-19 ...' aria-label='a FEN, or moves from the root'></"
    "label> <button>go</button></form><label>opening <select id='opening'><option value=''>one of"
    " the 19 published openings...</option></select></label></div>\n"
    "<h1 id='title'>Proof browser</h1><div id='summary'></div><div id='line'></div><div id='endli"
    "ne'></div><div id='main'><div id='board'></div><div id='pos'></div></div><h2 id='movesh'>Mov"
    "es</h2><div id='moves'></div><p class='note'>Click a move to go down, <kbd>←</kbd> or ↑ up t"
    "o go back up the line, <kbd>↑</kbd> <kbd>↓</kbd> to choose a move and <kbd>→</kbd> or <kbd>E"
    "nter</kbd> to play it, <kbd>e</kbd> to play the main line to its end; the browser's back but"
    "ton works, and every position has its own address. pn and dn are the proof and disproof numb"
    "ers of the question (∞: cannot be proven, resp. disproven, there); a score is alpha-beta's h"
    "euristic in hundredths of a man for the mover (hover for its meaning).</p><h2>Export</h2><di"
    "v id='export'></div><div id='check'></div>\n"
    "<script id='node' type='application/json'>";

static const char tree_script[] =
    "</script><script>\n"
    "(function(){'use strict';\n"
    "var d=JSON.parse(document.getElementById('node').textContent),sel=0,hover=-1,nums=false,flip"
    "=false,busy=false,ops=[];\n"
    "try{ops=JSON.parse(document.getElementById('openings').textContent);}catch(e){}\n"
    "function $(i){return document.getElementById(i);}\n"
    "function esc(s){return String(s).replace(/[&<>\"']/g,function(c){return{'&':'&amp;','<':'&lt"
    ";','>':'&gt;','\"':'&quot;',\"'\":'&#39;'}[c];});}\n"
    "function enc(s){return encodeURIComponent(s).replace(/%3A/g,':').replace(/%2C/g,',');}\n"
    "function pn(v){return v==='inf'?'\\u221e':(v===null||v===undefined)?'\\u2013':String(v);}\n"
    "function side(s){return s==='black'?'Black':'White';}\n"
    "function lineOf(n){return d.line.moves.slice(0,n).map(function(m){return m.move;}).join(',')"
    ";}\n"
    "function href(fen,line){return '/tree?fen='+enc(fen)+(line!==null?'&line='+enc(line):'');}\n"
    "function cls(v){return v==='win'||v==='>=draw'?'win':v==='loss'||v==='<=draw'?'loss':'';}\n"
    "function valueText(st,word){if(word!=='unknown')return word;var p=st.provisional,h=d.proof.h"
    ",a=side(d.proof.question.attacker);if(p>0)return 'open: counted proven for '+a+' ('+a+'\\'s "
    "score past h = '+h+')';if(p<0)return 'open: counted disproven for '+a+' ('+a+'\\'s score bel"
    "ow \\u2212h = '+(-h)+')';return 'open';}\n"
    "function board(){var mv=d.moves[hover>=0?hover:sel],mark={},cap={},s='',b=d.board;if(mv){mar"
    "k[mv.from]=1;mark[mv.to]=1;mv.path.forEach(function(q){mark[q]=1;});mv.captures.forEach(func"
    "tion(q){cap[q]=1;});}\n"
    "var pc={};b.bm.forEach(function(q){pc[q]='b';});b.wm.forEach(function(q){pc[q]='w';});b.bk.f"
    "orEach(function(q){pc[q]='B';});b.wk.forEach(function(q){pc[q]='W';});\n"
    "s+=\"<svg id='boardsvg' xmlns='http://www.w3.org/2000/svg' width='344' height='344' viewBox="
    "'-2 -2 324 324' role='img' aria-label='board'><title>\"+esc(d.fen)+'</title>';\n"
    "for(var r=0;r<8;r++)for(var c=0;c<8;c++){var dark=(r%2===0)?(c%2===1):(c%2===0),x=(flip?7-c:"
    "c)*40,y=(flip?7-r:r)*40;s+=\"<rect x='\"+x+\"' y='\"+y+\"' width='40' height='40' fill='\"+("
    "dark?'#a7794f':'#f0dcb8')+\"'/>\";if(!dark)continue;var q=r*4+(c>>1)+1;\n"
    "if(mark[q])s+=\"<rect x='\"+(x+2)+\"' y='\"+(y+2)+\"' width='36' height='36' fill='none' str"
    "oke='#f7dc3b' stroke-width='4'/>\";\n"
    "var p=pc[q];if(p){var bl=(p==='b'||p==='B');s+=\"<circle class='piece \"+(bl?'black':'white'"
    ")+(p==='B'||p==='W'?' king':'')+\"' data-sq='\"+q+\"' cx='\"+(x+20)+\"' cy='\"+(y+20)+\"' r="
    "'15' fill='\"+(bl?'#222':'#f8f8f8')+\"' stroke='\"+(bl?'#000':'#555')+\"' stroke-width='1.5'"
    "/>\";if(p==='B'||p==='W')s+=\"<text x='\"+(x+20)+\"' y='\"+(y+25)+\"' font-size='15' font-we"
    "ight='bold' text-anchor='middle' fill='\"+(bl?'#f5c542':'#b8860b')+\"'>K</text>\";}\n"
    "if(cap[q])s+=\"<path d='M\"+(x+8)+' '+(y+8)+'L'+(x+32)+' '+(y+32)+'M'+(x+32)+' '+(y+8)+'L'+("
    "x+8)+' '+(y+32)+\"' stroke='#d0312d' stroke-width='3'/>\";\n"
    "if(nums)s+=\"<text class='sqnum' x='\"+(x+2)+\"' y='\"+(y+10)+\"' font-size='10' font-weight"
    "='bold' fill='#fff' stroke='#000' stroke-width='2.5' paint-order='stroke'>\"+q+'</text>';}\n"
    "s+=\"<rect x='0' y='0' width='320' height='320' fill='none' stroke='#333'/></svg>\";$('board"
    "').innerHTML=s;}\n"
    "function render(){var P=d.proof,st=d.status;\n"
    "$('title').innerHTML='Proof of <code>'+esc(P.root)+'</code>';document.title=(d.line.known&&d"
    ".line.moves.length===0?'the root':d.fen)+' \\u2013 proof of '+P.root;\n"
    "$('summary').innerHTML='goal '+esc(P.goal)+': '+(P.settled?'<b>'+esc(P.result)+'</b> (settle"
    "d)':'so far '+esc(P.result))+'. '+(P.check_text?esc(P.check_text)+'. ':'')+'Question: does '"
    "+side(P.question.attacker)+(P.question.target==='win'?' win':' at least draw')+'? Threshold "
    "h: '+(P.h===null?'none (nothing provisional)':P.h)+(P.live?'. <b>A running proof</b>: this p"
    "age follows it.':'.');\n"
    "var L='<a href=\"'+href(P.root,'')+'\" data-n=\"0\"'+(d.line.known&&d.line.moves.length===0?"
    "' class=\"here\"':'')+'>root</a>',white=P.root.charAt(0)==='W';\n"
    "if(!d.line.known)L+=' <span class=\"note\">no line from the root through the tree reaches th"
    "is position</span>';\n"
    "d.line.moves.forEach(function(m,i){var k=i+(white?1:0);L+=' <span class=\"mv\">';if(k%2===0)"
    "L+='<span class=\"num\">'+(k/2+1)+'.</span>';else if(i===0)L+='<span class=\"num\">'+((k-1)/"
    "2+1)+'...</span>';L+='<a href=\"'+href(m.fen,lineOf(i+1))+'\" data-n=\"'+(i+1)+'\"'+(i===d.l"
    "ine.moves.length-1?' class=\"here\"':'')+'>'+esc(m.move)+'</a></span>';});\n"
    "$('line').innerHTML='line: '+L;\n"
    "var ml=d.main_line||[];$('endline').innerHTML=ml.length?'<button id=\"endbtn\" title=\"play "
    "the main line to its end (e)\">\\u25b6\\u25b6 play the main line to its end</button> <span c"
    "lass=\"note\">'+ml.length+' move'+(ml.length>1?'s':'')+': '+ml.slice(0,8).map(function(m){re"
    "turn esc(m.move);}).join(' ')+(ml.length>8?' \\u2026':'')+' (it ends at '+esc(d.main_line_en"
    "d)+')</span>':'<span class=\"note\">main line: none from here ('+esc(d.main_line_end||'')+')"
    "</span>';\n"
    "var q='<dl><dt>position</dt><dd><code>'+esc(d.fen)+'</code></dd><dt>to move</dt><dd>'+side(d"
    ".side)+'</dd><dt>value</dt><dd class=\"'+cls(st.value)+'\">'+esc(valueText(st,st.value))+' f"
    "or '+side(d.side)+'</dd><dt>source</dt><dd>'+esc(st.source)+'</dd><dt>checked</dt><dd>'+esc("
    "st.checked)+'</dd>';\n"
    "if(st.in_tree)q+='<dt>pn, dn</dt><dd>'+pn(st.pn)+', '+pn(st.dn)+'</dd><dt>score</dt><dd titl"
    "e=\"'+esc(st.score_text)+'\">'+st.score+' <span class=\"note\">'+esc(st.score_text)+'</span>"
    "</dd><dt>jobs</dt><dd>'+st.jobs+' ('+(st.job_ms/1000).toFixed(1)+' s, '+st.job_nodes+' df-pn"
    " positions)'+(st.in_flight?', <b>in flight</b>':'')+'</dd><dt>in the tree</dt><dd>'+(st.expa"
    "nded?'expanded: '+st.children+' children':'a leaf')+(st.parents>1?', reached by '+st.parents"
    "+' parents (a transposition)':'')+'</dd>';\n"
    "else q+='<dt>in the tree</dt><dd>'+(st.source==='database'?'no: a database position (its val"
    "ue is the databases\\')':st.source==='no move'?'no: the game is over here':st.source==='proo"
    "f store'?'no: below a leaf, in a worker\\'s proof':'no')+'</dd>';\n"
    "if(d.record)q+='<dt>proof store</dt><dd>'+esc(d.record.value)+' for '+side(d.side)+', proven"
    " and admitted'+(d.record.win_move?'; its winning move '+esc(d.record.win_move):'')+(d.record"
    ".draw_move&&d.record.draw_move!==d.record.win_move?'; its drawing move '+esc(d.record.draw_m"
    "ove):'')+'</dd>';\n"
    "q+='<dt>proving move</dt><dd>'+(d.proving?'<b>'+esc(d.proving)+'</b>':esc(d.proving_note||'n"
    "one'))+'</dd></dl>';$('pos').innerHTML=q;\n"
    "var t='<table id=\"movetable\"><thead><tr><th class=\"l\">move</th><th class=\"l\">value for"
    " '+side(d.side)+'</th><th class=\"l\">checked</th><th>pn</th><th>dn</th><th>score</th><th>in"
    " flight</th><th>jobs</th><th>job s</th></tr></thead><tbody>';\n"
    "d.moves.forEach(function(m,i){var c=m.status;t+='<tr data-i=\"'+i+'\" class=\"'+(m.proving?'"
    "proving ':'')+(i===sel?'sel':'')+'\"><td class=\"l\"><a href=\"'+href(m.fen,d.line.known?lin"
    "eOf(d.line.moves.length)+(d.line.moves.length?',':'')+m.move:null)+'\">'+esc(m.move)+'</a>'+"
    "(m.proving?' \\u2605':'')+'</td><td class=\"l '+cls(m.for_mover)+'\">'+esc(valueText(c,m.for"
    "_mover))+'</td><td class=\"l\">'+esc(c.checked)+'</td><td>'+pn(c.pn)+'</td><td>'+pn(c.dn)+'<"
    "/td><td title=\"'+esc(m.mover_score_text||'')+'\">'+(c.in_tree?m.mover_score:'\\u2013')+'</t"
    "d><td>'+(c.in_flight?'yes':'')+'</td><td>'+(c.in_tree?c.jobs:'')+'</td><td>'+(c.in_tree?(c.j"
    "ob_ms/1000).toFixed(1):'')+'</td></tr>';});\n"
    "t+='</tbody></table>';if(!d.moves.length)t='<p>'+side(d.side)+' has no move: the game is ove"
    "r.</p>';$('moves').innerHTML=t;\n"
    "$('movesh').textContent='Moves ('+d.moves.length+')';\n"
    "var lq=d.line.known?'&line='+enc(lineOf(d.line.moves.length)):'';\n"
    "$('export').innerHTML='<a href=\"/export/line.pdn?fen='+enc(d.fen)+lq+'\">the line as PDN</a"
    "> \\u00b7 '+(st.bound!=='LW'?'<a href=\"/export/proof.pdn?fen='+enc(d.fen)+'\">the proof bel"
    "ow as PDN</a>':'<span class=\"note\">no proof below (nothing proven here)</span>')+' \\u00b7"
    " <a href=\"/export/subtree.json?fen='+enc(d.fen)+'&depth=3\">the subtree as JSON</a> \\u00b7"
    " <a href=\"/api/node?fen='+enc(d.fen)+lq+'\">this position as JSON</a>'+(P.live?'':' \\u00b7"
    " <button id=\"checkbtn\">run the checker from here</button>');\n"
    "$('check').innerHTML='';$('toroot').href=href(P.root,'');board();}\n"
    "function go(fen,line,push){if(busy)return;busy=true;var q=[];if(fen!==null)q.push('fen='+enc"
    "(fen));if(line!==null&&line!==undefined)q.push('line='+enc(line));fetch('/api/node?'+q.join("
    "'&'),{credentials:'same-origin'}).then(function(r){return r.ok?r.json():r.text().then(functi"
    "on(t){var m=t;try{m=JSON.parse(t).error.message;}catch(x){}throw new Error(m);});}).then(fun"
    "ction(j){d=j;sel=0;hover=-1;d.moves.forEach(function(m,i){if(m.proving)sel=i;});render();var"
    " l=d.line.known?lineOf(d.line.moves.length):null;if(push)history.pushState({fen:d.fen,line:l"
    "},'',href(d.fen,l));}).catch(function(e){$('check').innerHTML='<p class=\"err\">'+esc(e.mess"
    "age)+'</p>';}).then(function(){busy=false;});}\n"
    "function up(){var n=d.line.moves.length;if(!d.line.known||n===0)return;go(n>1?d.line.moves[n"
    "-2].fen:d.proof.root,lineOf(n-1),true);}\n"
    "function toEnd(){var ml=d.main_line||[];if(!ml.length)return;var l=d.line.known?lineOf(d.lin"
    "e.moves.length):null;if(l!==null)l+=(l?',':'')+ml.map(function(m){return m.move;}).join(',')"
    ";go(ml[ml.length-1].fen,l,true);}\n"
    "function down(i){var m=d.moves[i];if(!m)return;go(m.fen,d.line.known?(lineOf(d.line.moves.le"
    "ngth)+(d.line.moves.length?',':'')+m.move):null,true);}\n"
    "document.addEventListener('click',function(e){var a=e.target.closest('a');if(e.target.id==='"
    "endbtn'){toEnd();return;}if(e.target.id==='checkbtn'){$('check').innerHTML='<p class=\"note\""
    ">checking...</p>';fetch('/api/check?fen='+enc(d.fen)).then(function(r){return r.text();}).th"
    "en(function(t){var s=t;try{var j=JSON.parse(t);s=j.error?j.error.message:'checker: '+j.statu"
    "s+(j.value?', '+j.value+' for '+side(d.side):'')+', '+j.positions+' positions in '+j.seconds"
    "+' s'+(j.why?': '+j.why:'')+(j.where?' (at '+j.where+')':'');}catch(x){}$('check').innerHTML"
    "='<p>'+esc(s)+'</p>';});return;}\n"
    "if(a&&a.closest('#line')){e.preventDefault();var n=+a.dataset.n;go(n?d.line.moves[n-1].fen:d"
    ".proof.root,lineOf(n),true);return;}\n"
    "if(a&&a.id==='toroot'){e.preventDefault();go(d.proof.root,'',true);return;}\n"
    "var tr=e.target.closest('#movetable tbody tr');if(tr&&!e.ctrlKey&&!e.metaKey){e.preventDefau"
    "lt();down(+tr.dataset.i);}});\n"
    "document.addEventListener('mouseover',function(e){var tr=e.target.closest('#movetable tbody "
    "tr');var h=tr?+tr.dataset.i:-1;if(h!==hover){hover=h;board();}});\n"
    "$('up').addEventListener('click',up);\n"
    "$('nums').addEventListener('change',function(e){nums=e.target.checked;board();});\n"
    "$('flip').addEventListener('change',function(e){flip=e.target.checked;board();});\n"
    "$('gotoform').addEventListener('submit',function(e){e.preventDefault();var v=$('goto').value"
    ".trim();if(!v)return;if(v.indexOf(':')>=0){go(v,null,true);return;}var mv=v.split(/[\\s,]+/)"
    ".filter(function(t){return t&&!/^\\d+\\.+$/.test(t)&&t!=='*';}).map(function(t){return t.rep"
    "lace(/^\\d+\\.+/,'');});go(null,mv.join(','),true);});\n"
    "ops.forEach(function(o,i){var op=document.createElement('option');op.value=String(i);op.text"
    "Content=o.no+'. '+o.moves+' (published: '+o.proof+' for Black)'+(o.held?' \\u2013 in this pr"
    "oof':' \\u2013 not in this proof');$('opening').appendChild(op);});\n"
    "$('opening').addEventListener('change',function(e){var o=ops[+e.target.value];if(!o)return;i"
    "f(o.held){go(o.fen,o.line,true);}else{$('check').innerHTML='<p class=\"err\">Opening '+o.no+"
    "' ('+esc(o.moves)+') is not in this proof, whose root is '+esc(d.proof.root)+': prove it wit"
    "h <code>make prove OPENING=\"'+esc(o.moves)+'\"</code> and serve its state.</p>';}e.target.v"
    "alue='';});\n"
    "document.addEventListener('keydown',function(e){if(e.target.tagName==='INPUT'||e.target.tagN"
    "ame==='SELECT'||e.altKey||e.ctrlKey||e.metaKey)return;var k=e.key;\n"
    "if(k==='ArrowLeft'){e.preventDefault();up();}\n"
    "else if(k==='ArrowRight'||k==='Enter'){e.preventDefault();down(sel);}\n"
    "else if(k==='ArrowDown'||k==='ArrowUp'){e.preventDefault();if(!d.moves.length)return;sel=(se"
    "l+(k==='ArrowDown'?1:d.moves.length-1))%d.moves.length;render();}\n"
    "else if(k==='n'){nums=!nums;$('nums').checked=nums;board();}\n"
    "else if(k==='f'){flip=!flip;$('flip').checked=flip;board();}\n"
    "else if(k==='e'){toEnd();}});\n"
    "window.addEventListener('popstate',function(e){var s=e.state;if(s)go(s.fen,s.line,false);});"
    "\n"
    "d.moves.forEach(function(m,i){if(m.proving)sel=i;});\n"
    "history.replaceState({fen:d.fen,line:d.line.known?lineOf(d.line.moves.length):null},'',locat"
    "ion.href);\n"
    "if(d.proof.live)setInterval(function(){if(!document.hidden)go(d.fen,d.line.known?lineOf(d.li"
    "ne.moves.length):null,false);},10000);\n"
    "render();})();\n"
    "</script></body></html>\n";

/* JSON inside a script element: "<" written as \u003c, so that no text
 * of it can close the element. */
static void
script_json(struct evbuffer *b, const char *json)
{
    for (const char *s = json; *s; s++) {
        if (*s == '<')
            evbuffer_add_printf(b, "\\u003c");
        else
            evbuffer_add(b, s, 1);
    }
}

/*
 * The 19 published openings for the page's picker, each with whether
 * this proof holds its position (in the tree, a record, or the root):
 * a state proves one root, so most are not in it, and the page says so
 * rather than answering 404. The files are read once, from
 * CHECKERS_OPENINGS or ./openings (ops_load); without them the picker
 * is empty. A line is given where the root is the start position, so
 * that the browser shows the opening's moves.
 */
static void
openings_json(web_server *w, struct evbuffer *b)
{
    if (!w->ops_tried) {
        char err[300];
        w->ops_tried = 1;
        w->ops = malloc(sizeof *w->ops);
        if (w->ops && ops_load(NULL, w->ops, err, sizeof err)) {
            free(w->ops);
            w->ops = NULL;
        }
    }
    evbuffer_add_printf(b, "[");
    eng_pos start;
    eng_start(&start);
    int from_start = eng_equal(&w->root, &start);
    for (int i = 0; w->ops && i < w->ops->npub; i++) {
        const ops_published *o = &w->ops->pub[i];
        web_status s;
        web_status_of(w, &o->pos, &s);
        char fen[ENG_FEN_MAX], line[80];
        eng_format_fen(&o->pos, fen, sizeof fen);
        snprintf(line, sizeof line, "%s", o->moves);
        for (char *c = line; *c; c++)
            if (*c == ' ')
                *c = ',';
        evbuffer_add_printf(b, "%s{\"no\":%d,\"moves\":", i ? "," : "", o->no);
        web_json_str(b, o->moves);
        evbuffer_add_printf(b, ",\"proof\":");
        web_json_str(b, o->proof);
        evbuffer_add_printf(b, ",\"fen\":");
        web_json_str(b, fen);
        evbuffer_add_printf(b, ",\"line\":");
        if (from_start)
            web_json_str(b, line);
        else
            evbuffer_add_printf(b, "null");
        evbuffer_add_printf(b, ",\"held\":%s}",
                            s.in_tree || s.has_record || eng_equal(&o->pos, &w->root) ? "true"
                                                                                      : "false");
    }
    evbuffer_add_printf(b, "]");
}

void
web_page_tree(web_server *w, struct evbuffer *b, const eng_pos *p, const char *node_json)
{
    char fen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    evbuffer_add(b, tree_head, sizeof tree_head - 1);
    /* each position's own title (the script keeps it as one moves) */
    web_html(b, eng_equal(p, &w->root) ? "the root" : fen);
    evbuffer_add_printf(b, " – proof of ");
    web_html(b, w->st.root_fen);
    evbuffer_add(b, tree_head2, sizeof tree_head2 - 1);
    script_json(b, node_json);
    evbuffer_add_printf(b, "</script><script id='openings' type='application/json'>");
    struct evbuffer *o = evbuffer_new();
    if (o) {
        openings_json(w, o);
        evbuffer_add(o, "", 1);
        script_json(b, (const char *)evbuffer_pullup(o, -1));
        evbuffer_free(o);
    } else {
        evbuffer_add_printf(b, "[]");
    }
    evbuffer_add(b, tree_script, sizeof tree_script - 1);
}

void
web_page_login(struct evbuffer *b, const char *path)
{
    evbuffer_add_printf(b,
                        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
                        "<title>token needed</title>%s</head><body><h1>This proof's pages "
                        "need its token</h1><form method='get' action='",
                        style);
    web_html(b, path);
    evbuffer_add_printf(b, "'><label>token <input type='password' name='token' autofocus></label> "
                           "<button>open</button></form><p class='note'>Scripts send it as "
                           "<code>Authorization: Bearer TOKEN</code>.</p></body></html>\n");
}

void
web_page_error(struct evbuffer *b, const char *name, int code, const char *reason, const char *msg)
{
    evbuffer_add_printf(b,
                        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
                        "<title>%d %s - proof browser</title>%s</head><body>\n"
                        "<nav><a href='/'>Overview</a><a href='/tree'>The root</a></nav>\n"
                        "<h1>%d %s</h1>\n<p class='bad'>",
                        code, reason, style, code, reason);
    web_html(b, msg);
    evbuffer_add_printf(b, "</p>\n<p class='note'>");
    web_html(b, name);
    evbuffer_add_printf(b, ". Go <a href='/'>to the overview</a>, <a href='/tree'>to the root's "
                           "position</a>, or back with the browser's back button.</p>"
                           "</body></html>\n");
}
