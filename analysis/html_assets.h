// The HTML report's style sheet and scripts (html_assets.cc), inlined into
// every page render_html.cc writes: the page fetches nothing when viewed.
#pragma once

namespace aic::analysis {

// Runs first (in <head>): collects script errors into #errors, where a
// reader and tests/integration/html_report_browser.py see them.
extern const char kHtmlErrorScript[];
extern const char kHtmlStyle[];
// Pan and zoom, the node panel with its spectrum plot, search, colouring,
// links and the #node=NAME fragment.
extern const char kHtmlScript[];

}  // namespace aic::analysis
