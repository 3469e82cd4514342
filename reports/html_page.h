// index.html: the report for a person, one self-contained page (inline CSS and SVG, no script, no network): a
// summary of every variant, the comparison with an earlier report (--compare), then per variant a table of its
// dtype x mode cells, histograms of ulps and of error/bound per dtype, a breakdown by problem shape and its property
// verdicts; the mutant kill matrix as a coloured grid; the coverage figures with a link to gcovr's
// pages. reports/README.md explains how to read each figure.
#pragma once

#include <string>

#include "reports/report.h"

namespace pacheck::reports {

std::string render_html(const Report& report);

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string html_escape(const std::string& text);

// One histogram as an inline <svg>: log-scale bins of `unit` ("ulps", "error/bound") on x, elements on a log scale
// on y, each bar coloured by the worst error / bound of its elements.
std::string histogram_svg(const Log2Histogram& histogram, const std::string& title, const std::string& unit);

}  // namespace pacheck::reports
