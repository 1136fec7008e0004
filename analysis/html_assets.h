// The HTML pages' style sheets and scripts (html_assets.cc), inlined into
// every page render_html.cc and render_opt_html.cc write: a page fetches
// nothing when viewed.
#pragma once

namespace aic::analysis {

// Runs first (in <head>): collects script errors into #errors, where a
// reader and tests/integration/html_report_browser.py see them.
extern const char kHtmlErrorScript[];
extern const char kHtmlStyle[];
// window.aicPanZoom(svg, canvas): one drawing's pan and zoom (svg_graph.h),
// for the scripts below; inlined before them in the same <script>.
extern const char kHtmlPanZoomScript[];
// The report's: pan and zoom, the node panel with its spectrum plot, search, colouring,
// links and the #node=NAME fragment.
extern const char kHtmlScript[];
// opt --html's page (render_opt_html.cc): its additions to kHtmlStyle, and
// its script (two drawings, their links, search over both).
extern const char kOptHtmlStyle[];
extern const char kOptHtmlScript[];

}  // namespace aic::analysis
