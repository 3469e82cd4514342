// Opens the page `pacheck report` writes, and that of a report compared with an earlier one, in headless Chromium
// (Debian's chromium package) and checks that they render: the screenshot is not blank, the page's colours reached
// the screen, and the page logged nothing to the console (it has no script). Two controls show the checks can fail:
// a blank page, a page that logs an error. Label `browser`; without chromium each test skips, naming the package,
// or fails when PACHECK_REQUIRE_BROWSER=1 (browser_requirement_test runs both cases).
#include <gtest/gtest.h>
#include <png.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <sys/wait.h>
#include <unordered_map>
#include <vector>

#include "tests/fixtures/subprocess.h"
#include "tests/fixtures/test_files.h"

namespace pacheck::testing {
namespace {

namespace fs = std::filesystem;

struct RgbaImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint32_t> pixels;  // 0xRRGGBBAA, row by row
};

class PngError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Any PNG libpng reads (every bit depth, palette, greyscale, interlaced) as 8-bit RGBA, with libpng's simplified
// API. Throws PngError naming the file and what is wrong: it cannot be opened, it is not a PNG, or libpng's complaint.
RgbaImage read_png(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PngError("cannot open " + path.string());
  // libpng's own message for a file that is not a PNG is terse; the signature check names the problem.
  std::array<png_byte, 8> signature{};
  in.read(reinterpret_cast<char*>(signature.data()), signature.size());
  const bool whole = in.gcount() == static_cast<std::streamsize>(signature.size());
  if (!whole || png_sig_cmp(signature.data(), 0, signature.size()) != 0)
    throw PngError(path.string() + " is not a PNG file (it does not start with the 8-byte PNG signature)");

  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str()))  // frees `image` itself on failure
    throw PngError("libpng cannot read " + path.string() + ": " + image.message);
  image.format = PNG_FORMAT_RGBA;
  std::vector<png_byte> rgba(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, rgba.data(), 0, nullptr))  // frees `image` in either case
    throw PngError("libpng cannot decode " + path.string() + ": " + image.message);

  RgbaImage out;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.pixels.resize(static_cast<std::size_t>(image.width) * image.height);
  for (std::size_t i = 0; i < out.pixels.size(); ++i) {
    const png_byte* p = rgba.data() + 4 * i;
    out.pixels[i] = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
  }
  return out;
}

// What a screenshot shows: how many pixels differ from the most common colour, how many distinct colours.
struct ImageContent {
  std::uint64_t pixels = 0;
  std::uint64_t differing_from_background = 0;
  std::size_t distinct_colours = 0;
};

ImageContent image_content(const RgbaImage& image) {
  std::unordered_map<std::uint32_t, std::uint64_t> histogram;
  for (std::uint32_t p : image.pixels) ++histogram[p];
  ImageContent content;
  content.pixels = image.pixels.size();
  content.distinct_colours = histogram.size();
  std::uint64_t background = 0;
  for (const auto& [colour, n] : histogram) background = std::max(background, n);
  content.differing_from_background = content.pixels - background;
  return content;
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
      const fs::path candidate = fs::path(dir) / name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  return std::nullopt;
}

std::string no_chromium_reason() {
  const char* chosen = std::getenv("PACHECK_CHROMIUM");
  const std::string looked = chosen && *chosen ? std::string("$PACHECK_CHROMIUM=") + chosen + " is not an executable"
                                               : "no chromium or chromium-browser on PATH";
  return "chromium not found (" + looked + "): this test renders the report page in a real browser. Install "
         "Debian's package: apt-get install chromium";
}

struct Rendering {
  int status = -1;
  std::vector<std::string> console;  // the page's console messages, as Chromium logs them
  std::string log;
  fs::path screenshot;
};

Rendering render(const std::string& chromium, const fs::path& page, const fs::path& work) {
  Rendering r;
  r.screenshot = work / "screenshot.png";
  const fs::path log = work / "chromium.log";
  const std::string command = "timeout 120 " + quoted(chromium) +
                              " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run"
                              " --window-size=1400,2400 --user-data-dir=" + quoted((work / "profile").string()) +
                              " --screenshot=" + quoted(r.screenshot.string()) +
                              " --enable-logging=stderr --v=0 " +
                              quoted("file://" + fs::absolute(page).string()) + " >" +
                              quoted(log.string()) + " 2>&1";
  r.status = std::system(command.c_str());
  r.log = read_text(log);
  std::istringstream lines(r.log);
  std::string line;
  while (std::getline(lines, line))
    if (line.find(":CONSOLE") != std::string::npos) r.console.push_back(line);
  return r;
}

// Why the screenshot does not look like a rendered page, or "": it does when at least 2% of the pixels differ from
// the background and there are more than a handful of colours.
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

// `pacheck report ARGUMENTS`, its output appended to `log`; the exit status.
int run_report(const std::string& arguments, const fs::path& log) {
  const std::string command =
      std::string(PACHECK_BINARY) + " report " + arguments + " >>" + quoted(log.string()) + " 2>&1";
  return std::system(command.c_str());
}

// PACHECK_REQUIRE_BROWSER=1 (CI) makes a missing browser a failure, so a run that rendered nothing cannot look green.
class ReportRender : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::optional<std::string> found = find_chromium()) {
      chromium_ = *found;
      return;
    }
    const char* required = std::getenv("PACHECK_REQUIRE_BROWSER");
    if (required && std::string(required) == "1")
      FAIL() << no_chromium_reason() << " (PACHECK_REQUIRE_BROWSER=1: the browser is required)";
    GTEST_SKIP() << no_chromium_reason();
  }
  // Renders a report page into `image`: chromium succeeded, the page logged nothing, the screenshot is not blank.
  void render_page(const fs::path& page, const fs::path& work, RgbaImage& image) {
    const Rendering r = render(chromium_, page, work);
    ASSERT_EQ(r.status, 0) << "chromium failed:\n" << r.log;
    EXPECT_EQ(r.console, std::vector<std::string>{}) << "the page logged to the console";
    image = read_png(r.screenshot);
    EXPECT_EQ(blank_screenshot_problem(image_content(image)), "");
  }
  std::string chromium_;
};

TEST_F(ReportRender, TheReportPageRendersWithoutConsoleMessages) {
  const fs::path dir = fresh_dir("report");
  const fs::path out = dir / "report";
  // One variant and few cases keep it quick; the kill matrix and the coverage section (from a small gcovr summary)
  // are on the page too.
  ASSERT_EQ(run_report("--out " + quoted(out.string()) + " --variant cpu_streaming --cases 2 --kill-cases 1 "
                       "--coverage " + quoted(PACHECK_COVERAGE_SAMPLE), dir / "report.log"), 0)
      << read_text(dir / "report.log");
  ASSERT_TRUE(fs::exists(out / "index.html"));
  ASSERT_TRUE(fs::exists(out / "ulp.json"));
  RgbaImage image;
  ASSERT_NO_FATAL_FAILURE(render_page(out / "index.html", dir, image));
  EXPECT_EQ(image.width, 1400);
  // The page's own colours reached the screen: the header's background, and the histogram's bar for exactly
  // rounded elements (the inline SVG rendered).
  EXPECT_TRUE(has_colour(image, 0x1d2430)) << "the header's colour is missing: was the inline CSS applied?";
  EXPECT_TRUE(has_colour(image, 0x2e7d32)) << "no histogram bar in the screenshot: did the inline SVG render?";
  // A correct kernel raises no alarm on screen: no bar or verdict in the colours of a broken bound or a NaN.
  EXPECT_FALSE(has_colour(image, 0xc62828)) << "a correct kernel's page shows the broken-bound red";
  EXPECT_FALSE(has_colour(image, 0x6a1b9a)) << "a correct kernel's page shows the non-finite purple";
  const std::string html = read_text(out / "index.html");
  EXPECT_TRUE(contains(html, "id=\"kill-matrix\"><h2>Mutant kill matrix</h2><p class=\"note\">Every property"));
  EXPECT_TRUE(contains(html, "<td class=\"l\">variants/</td>")) << "the coverage table is missing";
  fs::remove_all(dir);
}

// The compare view: pv_in_bf16 (its PV accumulator in bf16) against cpu_streaming; its red "worse" cells sit under
// the summary, in the screenshot.
TEST_F(ReportRender, TheCompareViewRendersItsFlags) {
  const fs::path dir = fresh_dir("compare");
  const fs::path log = dir / "report.log";
  const std::string quick = " --cases 2 --kill-cases 0";
  ASSERT_EQ(run_report("--out " + quoted((dir / "before").string()) + quick + " --variant cpu_streaming", log), 0)
      << read_text(log);
  const int status = run_report("--out " + quoted((dir / "after").string()) + quick + " --variant pv_in_bf16 " +
                                    "--compare " + quoted((dir / "before/ulp.json").string()) +
                                    " --compare-pair cpu_streaming=pv_in_bf16",
                                log);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "a precision loss exits 1\n" << read_text(log);
  ASSERT_TRUE(contains(read_text(dir / "after" / "index.html"), "id=\"comparison\""));
  RgbaImage image;
  ASSERT_NO_FATAL_FAILURE(render_page(dir / "after" / "index.html", dir, image));
  EXPECT_TRUE(has_colour(image, 0xfbd0cb)) << "no cell flagged worse in the screenshot: did the comparison render?";
  fs::remove_all(dir);
}

TEST_F(ReportRender, ABlankPageIsCaughtAsBlank) {
  const fs::path dir = fresh_dir("blank");
  std::ofstream(dir / "blank.html") << "<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head>"
                                       "<body style=\"background:#fff\"></body></html>";
  const Rendering r = render(chromium_, dir / "blank.html", dir);
  ASSERT_EQ(r.status, 0) << r.log;
  EXPECT_NE(blank_screenshot_problem(image_content(read_png(r.screenshot))), "");
  fs::remove_all(dir);
}

TEST_F(ReportRender, AConsoleErrorIsCaught) {
  const fs::path dir = fresh_dir("console");
  std::ofstream(dir / "noisy.html") << "<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head><body>"
                                       "<p>text</p><script>console.error('pacheck-render-test-error')</script>"
                                       "</body></html>";
  const Rendering r = render(chromium_, dir / "noisy.html", dir);
  ASSERT_EQ(r.status, 0) << r.log;
  ASSERT_EQ(r.console.size(), 1u) << r.log;
  EXPECT_TRUE(contains(r.console[0], "pacheck-render-test-error"));
  fs::remove_all(dir);
}

TEST(PngImage, ReadsWhatLibpngWroteAndRejectsTheRest) {
  const fs::path dir = fresh_dir("png");
  // A 2x1 RGB image (one red, one blue pixel) and a 1x1 greyscale one, written by libpng.
  const auto write = [&](const std::string& name, png_uint_32 format, png_uint_32 width, std::vector<png_byte> pixels) {
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    image.width = width;
    image.height = 1;
    image.format = format;
    ASSERT_TRUE(png_image_write_to_file(&image, (dir / name).c_str(), 0, pixels.data(), 0, nullptr)) << image.message;
  };
  write("rgb.png", PNG_FORMAT_RGB, 2, {255, 0, 0, 0, 0, 255});
  write("grey.png", PNG_FORMAT_GRAY, 1, {128});
  const RgbaImage rgb = read_png(dir / "rgb.png");
  EXPECT_EQ(rgb.width, 2);
  EXPECT_EQ(rgb.height, 1);
  ASSERT_EQ(rgb.pixels.size(), 2u);
  EXPECT_EQ(rgb.pixels[0], 0xff0000ffu);
  EXPECT_EQ(rgb.pixels[1], 0x0000ffffu);
  EXPECT_EQ(image_content(rgb).distinct_colours, 2u);
  EXPECT_EQ(image_content(rgb).differing_from_background, 1u);
  EXPECT_EQ(read_png(dir / "grey.png").pixels, std::vector<std::uint32_t>{0x808080ffu});

  const auto rejects = [](const fs::path& path, const std::string& mentions) {
    EXPECT_TRUE(contains(thrown_message<PngError>([&] { read_png(path); }), mentions));
  };
  std::ofstream(dir / "text.png") << "<!DOCTYPE html>";
  rejects(dir / "text.png", (dir / "text.png").string() + " is not a PNG file");
  std::ofstream(dir / "short.png") << "\x89PN";
  rejects(dir / "short.png", "is not a PNG file");
  // The signature and the start of the header, then nothing: libpng's complaint, with the file's name.
  const std::string whole = read_text(dir / "rgb.png");
  std::ofstream(dir / "truncated.png", std::ios::binary) << whole.substr(0, 20);
  rejects(dir / "truncated.png", "libpng cannot read " + (dir / "truncated.png").string() + ": ");
  std::string corrupt = whole;
  corrupt[corrupt.size() - 20] ^= 0x5a;  // inside the image data: its checksum no longer matches
  std::ofstream(dir / "corrupt.png", std::ios::binary) << corrupt;
  rejects(dir / "corrupt.png", "libpng cannot decode " + (dir / "corrupt.png").string() + ": ");
  rejects(dir / "missing.png", "cannot open " + (dir / "missing.png").string());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pacheck::testing
