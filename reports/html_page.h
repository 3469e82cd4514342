// index.html: the report for a person, one self-contained page (inline CSS and SVG, no script, no network): a
// summary of every variant, then per variant a table of its dtype x mode cells, an ulp histogram per dtype and
// its property verdicts; the mutant kill matrix as a coloured grid; the coverage figures with a link to gcovr's
// pages. reports/README.md explains how to read each figure.
#pragma once

#include <string>

#include "reports/report.h"

namespace pacheck::reports {

std::string render_html(const Report& report);

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string html_escape(const std::string& text);

// One histogram as an inline <svg>: log-scale ulp bins on x, elements on a log scale on y.
std::string histogram_svg(const UlpHistogram& histogram, const std::string& title);

}  // namespace pacheck::reports
