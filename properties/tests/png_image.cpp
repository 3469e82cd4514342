#include "properties/tests/png_image.h"

#include <array>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <unordered_map>

namespace pacheck::testing {
namespace {

// Reads a DEFLATE stream bit by bit, least significant bit first.
class BitReader {
 public:
  BitReader(const std::vector<std::uint8_t>& data, std::size_t start) : data_(data), byte_(start) {}
  int bit() {
    if (byte_ >= data_.size()) throw PngError("deflate stream ends early");
    const int b = (data_[byte_] >> bit_) & 1;
    if (++bit_ == 8) {
      bit_ = 0;
      ++byte_;
    }
    return b;
  }
  int bits(int n) {
    int v = 0;
    for (int i = 0; i < n; ++i) v |= bit() << i;
    return v;
  }
  void align() {
    if (bit_ != 0) {
      bit_ = 0;
      ++byte_;
    }
  }
  std::uint8_t byte() {
    if (byte_ >= data_.size()) throw PngError("deflate stream ends early");
    return data_[byte_++];
  }

 private:
  const std::vector<std::uint8_t>& data_;
  std::size_t byte_;
  int bit_ = 0;
};

// A canonical Huffman code, decoded one bit at a time (count of codes per length, symbols in code order).
class Huffman {
 public:
  explicit Huffman(const std::vector<int>& lengths) : counts_(16, 0) {
    for (int len : lengths) ++counts_[len];
    counts_[0] = 0;
    std::vector<int> offsets(16, 0);
    for (int len = 1; len < 16; ++len) offsets[len] = offsets[len - 1] + counts_[len - 1];
    symbols_.resize(lengths.size());
    for (std::size_t s = 0; s < lengths.size(); ++s)
      if (lengths[s] != 0) symbols_[offsets[lengths[s]]++] = static_cast<int>(s);
  }
  int decode(BitReader& in) const {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len < 16; ++len) {
      code |= in.bit();
      const int count = counts_[len];
      if (code - count < first) return symbols_[index + (code - first)];
      index += count;
      first += count;
      first <<= 1;
      code <<= 1;
    }
    throw PngError("invalid Huffman code in deflate stream");
  }

 private:
  std::vector<int> counts_;
  std::vector<int> symbols_;
};

constexpr std::array<int, 29> kLengthBase = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                             31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::array<int, 29> kLengthExtra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                              2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr std::array<int, 30> kDistanceBase = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,
                                               33,  49,  65,  97,  129, 193,  257,  385,  513,  769,
                                               1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr std::array<int, 30> kDistanceExtra = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                                6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

void inflate_block(BitReader& in, const Huffman& literals, const Huffman& distances, std::vector<std::uint8_t>& out) {
  for (;;) {
    const int symbol = literals.decode(in);
    if (symbol < 256) {
      out.push_back(static_cast<std::uint8_t>(symbol));
    } else if (symbol == 256) {
      return;
    } else {
      const int l = symbol - 257;
      if (l >= 29) throw PngError("invalid length symbol in deflate stream");
      const int length = kLengthBase[l] + in.bits(kLengthExtra[l]);
      const int d = distances.decode(in);
      if (d >= 30) throw PngError("invalid distance symbol in deflate stream");
      const std::size_t distance = static_cast<std::size_t>(kDistanceBase[d] + in.bits(kDistanceExtra[d]));
      if (distance > out.size()) throw PngError("deflate distance reaches before the start of the output");
      for (int i = 0; i < length; ++i) out.push_back(out[out.size() - distance]);
    }
  }
}

void inflate_dynamic(BitReader& in, std::vector<std::uint8_t>& out) {
  const int literal_count = in.bits(5) + 257;
  const int distance_count = in.bits(5) + 1;
  const int code_length_count = in.bits(4) + 4;
  static constexpr std::array<int, 19> kOrder = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  std::vector<int> code_lengths(19, 0);
  for (int i = 0; i < code_length_count; ++i) code_lengths[kOrder[i]] = in.bits(3);
  const Huffman code_length_code(code_lengths);
  std::vector<int> lengths;
  while (static_cast<int>(lengths.size()) < literal_count + distance_count) {
    const int symbol = code_length_code.decode(in);
    if (symbol < 16) {
      lengths.push_back(symbol);
    } else {
      int repeat = 0, value = 0;
      if (symbol == 16) {
        if (lengths.empty()) throw PngError("deflate repeats a code length before the first");
        value = lengths.back();
        repeat = 3 + in.bits(2);
      } else if (symbol == 17) {
        repeat = 3 + in.bits(3);
      } else {
        repeat = 11 + in.bits(7);
      }
      lengths.insert(lengths.end(), repeat, value);
    }
  }
  if (static_cast<int>(lengths.size()) != literal_count + distance_count)
    throw PngError("deflate code lengths overrun");
  const Huffman literals(std::vector<int>(lengths.begin(), lengths.begin() + literal_count));
  const Huffman distances(std::vector<int>(lengths.begin() + literal_count, lengths.end()));
  inflate_block(in, literals, distances, out);
}

void inflate_fixed(BitReader& in, std::vector<std::uint8_t>& out) {
  std::vector<int> literal_lengths(288);
  for (int i = 0; i < 288; ++i) literal_lengths[i] = i < 144 ? 8 : (i < 256 ? 9 : (i < 280 ? 7 : 8));
  static const Huffman literals(literal_lengths);
  static const Huffman distances(std::vector<int>(30, 5));
  inflate_block(in, literals, distances, out);
}

std::uint32_t big_endian32(const std::vector<std::uint8_t>& d, std::size_t at) {
  return (std::uint32_t{d[at]} << 24) | (std::uint32_t{d[at + 1]} << 16) | (std::uint32_t{d[at + 2]} << 8) | d[at + 3];
}

int paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

}  // namespace

std::vector<std::uint8_t> zlib_inflate(const std::vector<std::uint8_t>& stream) {
  if (stream.size() < 2) throw PngError("zlib stream too short");
  if ((stream[0] & 0x0f) != 8 || ((stream[0] << 8) | stream[1]) % 31 != 0) throw PngError("not a zlib deflate stream");
  if (stream[1] & 0x20) throw PngError("zlib preset dictionaries are not supported");
  BitReader in(stream, 2);
  std::vector<std::uint8_t> out;
  for (bool last = false; !last;) {
    last = in.bit() != 0;
    const int type = in.bits(2);
    if (type == 0) {
      in.align();
      const int len = in.byte() | (in.byte() << 8);
      const int nlen = in.byte() | (in.byte() << 8);
      if ((len ^ 0xffff) != nlen) throw PngError("stored deflate block has a bad length");
      for (int i = 0; i < len; ++i) out.push_back(in.byte());
    } else if (type == 1) {
      inflate_fixed(in, out);
    } else if (type == 2) {
      inflate_dynamic(in, out);
    } else {
      throw PngError("invalid deflate block type");
    }
  }
  return out;
}

RgbaImage decode_png(const std::vector<std::uint8_t>& file) {
  static constexpr std::array<std::uint8_t, 8> kSignature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (file.size() < 8 || !std::equal(kSignature.begin(), kSignature.end(), file.begin())) throw PngError("not a PNG file");
  RgbaImage image;
  int bit_depth = 0, colour_type = -1, interlace = 0;
  std::vector<std::uint8_t> compressed;
  for (std::size_t at = 8; at + 12 <= file.size();) {
    const std::uint32_t length = big_endian32(file, at);
    const std::string type(file.begin() + static_cast<long>(at) + 4, file.begin() + static_cast<long>(at) + 8);
    if (at + 12 + length > file.size()) throw PngError("PNG chunk " + type + " runs past the end of the file");
    const std::size_t data = at + 8;
    if (type == "IHDR") {
      image.width = static_cast<int>(big_endian32(file, data));
      image.height = static_cast<int>(big_endian32(file, data + 4));
      bit_depth = file[data + 8];
      colour_type = file[data + 9];
      interlace = file[data + 12];
    } else if (type == "IDAT") {
      compressed.insert(compressed.end(), file.begin() + static_cast<long>(data),
                        file.begin() + static_cast<long>(data + length));
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (image.width <= 0 || image.height <= 0) throw PngError("PNG has no IHDR or an empty image");
  if (bit_depth != 8 || interlace != 0) throw PngError("only 8-bit non-interlaced PNGs are supported");
  int channels = 0;
  switch (colour_type) {
    case 0: channels = 1; break;
    case 2: channels = 3; break;
    case 4: channels = 2; break;
    case 6: channels = 4; break;
    default: throw PngError("unsupported PNG colour type " + std::to_string(colour_type));
  }
  const std::vector<std::uint8_t> raw = zlib_inflate(compressed);
  const std::size_t stride = static_cast<std::size_t>(image.width) * channels;
  if (raw.size() < (stride + 1) * static_cast<std::size_t>(image.height)) throw PngError("PNG image data is short");
  std::vector<std::uint8_t> previous(stride, 0), row(stride);
  image.pixels.reserve(static_cast<std::size_t>(image.width) * image.height);
  for (int y = 0; y < image.height; ++y) {
    const std::uint8_t* line = raw.data() + static_cast<std::size_t>(y) * (stride + 1);
    const int filter = line[0];
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<std::size_t>(channels) ? row[i - channels] : 0;
      const int b = previous[i];
      const int c = i >= static_cast<std::size_t>(channels) ? previous[i - channels] : 0;
      int predicted = 0;
      switch (filter) {
        case 0: predicted = 0; break;
        case 1: predicted = a; break;
        case 2: predicted = b; break;
        case 3: predicted = (a + b) / 2; break;
        case 4: predicted = paeth(a, b, c); break;
        default: throw PngError("invalid PNG filter " + std::to_string(filter));
      }
      row[i] = static_cast<std::uint8_t>(line[1 + i] + predicted);
    }
    for (int x = 0; x < image.width; ++x) {
      const std::uint8_t* p = row.data() + static_cast<std::size_t>(x) * channels;
      std::uint32_t r = p[0], g = p[0], bl = p[0], alpha = 255;
      if (channels >= 3) {
        g = p[1];
        bl = p[2];
      }
      if (channels == 4) alpha = p[3];
      if (channels == 2) alpha = p[1];
      image.pixels.push_back((r << 24) | (g << 16) | (bl << 8) | alpha);
    }
    previous.swap(row);
  }
  return image;
}

RgbaImage read_png(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PngError("cannot open " + path.string());
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return decode_png(bytes);
}

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

}  // namespace pacheck::testing
