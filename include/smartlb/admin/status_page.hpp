#pragma once
// The live status page served at / on the admin port: one self-contained document (no CDN, no
// fonts, no network but its own /status) that polls /status every 1.5 s and inserts the
// server's strings with textContent only, never as HTML. Its sources are src/admin/page/
// (index.html, style.css, app.js); the build inlines the style and the script into the
// document and compiles its bytes in (src/admin/embed_page.cmake).
#include <string>

namespace smartlb::admin {

const std::string& status_page_html();

}  // namespace smartlb::admin
