// Opens the report page that `pacheck report` writes in headless Chromium (Debian's chromium package) and checks
// that it renders: the screenshot is not blank and the page logged nothing to the console (the page has no
// script, so any console message means something went wrong). Two controls show the checks can fail: a blank
// page is caught as blank, a page that logs an error is caught. Label `browser`; without chromium every test
// fails with the reason (CI installs it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "tests/fixtures/png_image.h"

namespace pacheck::testing {
namespace {

std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pacheck_render_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// $PACHECK_CHROMIUM, else chromium or chromium-browser on PATH.
std::optional<std::string> find_chromium() {
  if (const char* chosen = std::getenv("PACHECK_CHROMIUM"); chosen && *chosen) {
    if (::access(chosen, X_OK) == 0) return std::string(chosen);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    for (const char* name : {"chromium", "chromium-browser"}) {
      const std::filesystem::path candidate = std::filesystem::path(dir) / name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  return std::nullopt;
}

const char* kNoChromium =
    "chromium not found (looked for $PACHECK_CHROMIUM, then chromium and chromium-browser on PATH): this test "
    "renders the report page in a real browser and cannot pass without one. Install Debian's package: "
    "apt-get install chromium";

struct Rendering {
  int status = -1;
  std::vector<std::string> console;  // the page's console messages, as Chromium logs them
  std::string log;
  std::filesystem::path screenshot;
};

Rendering render(const std::string& chromium, const std::filesystem::path& page, const std::filesystem::path& work) {
  Rendering r;
  r.screenshot = work / "screenshot.png";
  const std::filesystem::path log = work / "chromium.log";
  const std::string command = "timeout 120 " + shell_quote(chromium) +
                              " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run"
                              " --window-size=1400,2400 --user-data-dir=" + shell_quote((work / "profile").string()) +
                              " --screenshot=" + shell_quote(r.screenshot.string()) +
                              " --enable-logging=stderr --v=0 " +
                              shell_quote("file://" + std::filesystem::absolute(page).string()) + " >" +
                              shell_quote(log.string()) + " 2>&1";
  r.status = std::system(command.c_str());
  r.log = read_text(log);
  std::istringstream lines(r.log);
  std::string line;
  while (std::getline(lines, line))
    if (line.find(":CONSOLE") != std::string::npos) r.console.push_back(line);
  return r;
}

// Why the screenshot does not look like a rendered page, or "" when it does: at least 2% of the pixels differ
// from the background and there are more than a handful of colours (text, tables, bars).
std::string blank_screenshot_problem(const ImageContent& c) {
  if (c.pixels == 0) return "the screenshot has no pixels";
  if (c.differing_from_background == 0) return "the screenshot is uniformly one colour";
  if (c.differing_from_background * 50 < c.pixels)
    return "only " + std::to_string(c.differing_from_background) + " of " + std::to_string(c.pixels) +
           " pixels differ from the background";
  if (c.distinct_colours < 8) return "only " + std::to_string(c.distinct_colours) + " colours";
  return "";
}

bool has_colour(const RgbaImage& image, std::uint32_t rgb) {
  for (std::uint32_t p : image.pixels)
    if ((p >> 8) == rgb) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

TEST(ReportRender, TheReportPageRendersWithoutConsoleMessages) {
  const std::optional<std::string> chromium = find_chromium();
  ASSERT_TRUE(chromium.has_value()) << kNoChromium;
  const std::filesystem::path dir = fresh_dir("report");
  const std::filesystem::path out = dir / "report";
  // One variant and few cases keep it quick; the kill matrix and the coverage section (from a small tracefile)
  // are on the page too.
  const std::string report = std::string(PACHECK_BINARY) + " report --out " + shell_quote(out.string()) +
                             " --variant cpu_streaming --cases 2 --kill-cases 1 --coverage " +
                             shell_quote(PACHECK_COVERAGE_SAMPLE) + " >" + shell_quote((dir / "report.log").string()) +
                             " 2>&1";
  const int report_status = std::system(report.c_str());
  ASSERT_EQ(report_status, 0) << report << "\n" << read_text(dir / "report.log");
  ASSERT_TRUE(std::filesystem::exists(out / "index.html"));
  ASSERT_TRUE(std::filesystem::exists(out / "ulp.json"));

  const Rendering r = render(*chromium, out / "index.html", dir);
  ASSERT_EQ(r.status, 0) << "chromium failed:\n" << r.log;
  EXPECT_TRUE(r.console.empty()) << "the page logged to the console:\n" << joined(r.console);
  const RgbaImage image = read_png(r.screenshot);
  EXPECT_EQ(image.width, 1400);
  EXPECT_EQ(blank_screenshot_problem(image_content(image)), "");
  // The page's own colours reached the screen: the header's background, and the histogram's bar for exactly
  // rounded elements (the inline SVG rendered).
  EXPECT_TRUE(has_colour(image, 0x1d2430)) << "the header's colour is missing: was the inline CSS applied?";
  EXPECT_TRUE(has_colour(image, 0x2e7d32)) << "no histogram bar in the screenshot: did the inline SVG render?";
  const std::string html = read_text(out / "index.html");
  EXPECT_NE(html.find("id=\"kill-matrix\"><h2>Mutant kill matrix</h2><p class=\"note\">Every property"), std::string::npos)
      << "the kill matrix grid is missing";
  EXPECT_NE(html.find("<td class=\"l\">variants/</td>"), std::string::npos) << "the coverage table is missing";
  std::filesystem::remove_all(dir);
}

TEST(ReportRender, ABlankPageIsCaughtAsBlank) {
  const std::optional<std::string> chromium = find_chromium();
  ASSERT_TRUE(chromium.has_value()) << kNoChromium;
  const std::filesystem::path dir = fresh_dir("blank");
  std::ofstream(dir / "blank.html") << "<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head>"
                                       "<body style=\"background:#fff\"></body></html>";
  const Rendering r = render(*chromium, dir / "blank.html", dir);
  ASSERT_EQ(r.status, 0) << r.log;
  EXPECT_NE(blank_screenshot_problem(image_content(read_png(r.screenshot))), "");
  std::filesystem::remove_all(dir);
}

TEST(ReportRender, AConsoleErrorIsCaught) {
  const std::optional<std::string> chromium = find_chromium();
  ASSERT_TRUE(chromium.has_value()) << kNoChromium;
  const std::filesystem::path dir = fresh_dir("console");
  std::ofstream(dir / "noisy.html") << "<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head><body>"
                                       "<p>text</p><script>console.error('pacheck-render-test-error')</script>"
                                       "</body></html>";
  const Rendering r = render(*chromium, dir / "noisy.html", dir);
  ASSERT_EQ(r.status, 0) << r.log;
  ASSERT_EQ(r.console.size(), 1u) << r.log;
  EXPECT_NE(r.console[0].find("pacheck-render-test-error"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(PngImage, DecodesWhatItIsGivenAndRejectsTheRest) {
  // A 2x1 RGB PNG (one red, one blue pixel) stored uncompressed, as a hand-made zlib stream.
  const std::vector<std::uint8_t> raw = {0, 255, 0, 0, 0, 0, 255};  // filter 0, then the two pixels
  std::vector<std::uint8_t> zlib = {0x78, 0x01, 0x01, 7, 0, static_cast<std::uint8_t>(~7), 0xff};
  zlib.insert(zlib.end(), raw.begin(), raw.end());
  zlib.insert(zlib.end(), {0, 0, 0, 0});  // adler32 (not checked)
  EXPECT_EQ(zlib_inflate(zlib), raw);
  auto chunk = [](const std::string& type, const std::vector<std::uint8_t>& data) {
    std::vector<std::uint8_t> c = {0, 0, 0, static_cast<std::uint8_t>(data.size())};
    for (char t : type) c.push_back(static_cast<std::uint8_t>(t));
    for (std::uint8_t d : data) c.push_back(d);
    for (int i = 0; i < 4; ++i) c.push_back(0);  // CRC (not checked)
    return c;
  };
  std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  for (const auto& c : {chunk("IHDR", {0, 0, 0, 2, 0, 0, 0, 1, 8, 2, 0, 0, 0}), chunk("IDAT", zlib), chunk("IEND", {})})
    png.insert(png.end(), c.begin(), c.end());
  const RgbaImage image = decode_png(png);
  ASSERT_EQ(image.pixels.size(), 2u);
  EXPECT_EQ(image.pixels[0], 0xff0000ffu);
  EXPECT_EQ(image.pixels[1], 0x0000ffffu);
  EXPECT_EQ(image_content(image).distinct_colours, 2u);
  EXPECT_THROW(decode_png({1, 2, 3}), PngError);
  EXPECT_THROW(zlib_inflate({0x78, 0x01, 0x07}), PngError);  // block type 3 does not exist
}

}  // namespace
}  // namespace pacheck::testing
