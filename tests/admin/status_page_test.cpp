// The status page as served: src/admin/page/index.html with style.css and app.js inline where
// it links them, byte for byte, since the page's Content-Security-Policy lets it load nothing
// but /status.
#include "smartlb/admin/status_page.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace smartlb {
namespace status_page_test {  // named, not anonymous: tests/CMakeLists.txt

std::string page_source(const std::string& name) {
  std::ifstream f(std::string(SMARTLB_SOURCE_DIR) + "/src/admin/page/" + name, std::ios::binary);
  EXPECT_TRUE(f) << name;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void replace_once(std::string& text, const std::string& what, const std::string& with) {
  const auto at = text.find(what);
  ASSERT_NE(at, std::string::npos) << "index.html lacks " << what;
  text.replace(at, what.size(), with);
}

TEST(StatusPage, IsIndexHtmlWithItsStyleAndScriptInline) {
  std::string expected = page_source("index.html");
  replace_once(expected, "<link rel=\"stylesheet\" href=\"style.css\">",
               "<style>\n" + page_source("style.css") + "</style>");
  replace_once(expected, "<script src=\"app.js\"></script>",
               "<script>\n" + page_source("app.js") + "</script>");
  const std::string& page = admin::status_page_html();
  EXPECT_EQ(page, expected);
  EXPECT_EQ(page.find("<link"), std::string::npos) << "nothing loaded beside the page";
  EXPECT_EQ(page.find("<script src"), std::string::npos);
}

}  // namespace status_page_test
}  // namespace smartlb
