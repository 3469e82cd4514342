// A small PNG reader for the browser render test: enough of PNG (8-bit greyscale, RGB, RGBA, grey+alpha,
// non-interlaced) and of DEFLATE to read Chromium's screenshots, so the test can tell a rendered page from a
// blank one without a dependency beyond the Debian packages the project allows.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace pacheck::testing {

struct RgbaImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint32_t> pixels;  // 0xRRGGBBAA, row by row
};

class PngError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The zlib stream's decompressed bytes (RFC 1950 / 1951). Throws PngError on a malformed stream.
std::vector<std::uint8_t> zlib_inflate(const std::vector<std::uint8_t>& stream);

// Throws PngError naming what it cannot read.
RgbaImage decode_png(const std::vector<std::uint8_t>& file);
RgbaImage read_png(const std::filesystem::path& path);

// What a screenshot shows: how many pixels differ from the most common colour, how many distinct colours.
struct ImageContent {
  std::uint64_t pixels = 0;
  std::uint64_t differing_from_background = 0;
  std::size_t distinct_colours = 0;
};
ImageContent image_content(const RgbaImage& image);

}  // namespace pacheck::testing
