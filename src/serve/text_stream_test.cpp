// TextStream: UTF-8 sequences cut between pieces are held until complete,
// stop strings split over pieces are found and never sent, a tail that only
// looked like a stop string's start is sent later, and finish() flushes it.
#include <gtest/gtest.h>

#include "serve/text_stream.hpp"

namespace blockq::serve {
namespace {

TEST(TextStream, HoldsACutUtf8SequenceUntilComplete) {
  const std::string euro = "\xE2\x82\xAC";  // U+20AC, three bytes
  const std::string face = "\xF0\x9F\x98\x80";  // U+1F600, four bytes
  EXPECT_EQ(complete_utf8_prefix("ab" + euro.substr(0, 1), 3), 2u);
  EXPECT_EQ(complete_utf8_prefix("ab" + euro.substr(0, 2), 4), 2u);
  EXPECT_EQ(complete_utf8_prefix("ab" + euro, 5), 5u);
  EXPECT_EQ(complete_utf8_prefix(face.substr(0, 3), 3), 0u);
  EXPECT_EQ(complete_utf8_prefix("\x80\x80", 2), 2u);  // stray continuation bytes are not held
  EXPECT_EQ(complete_utf8_prefix("a\xFF", 2), 2u);       // nor an invalid lead byte

  TextStream ts;
  EXPECT_EQ(ts.push("x" + face.substr(0, 1)), "x");
  EXPECT_EQ(ts.push(face.substr(1, 2)), "");
  EXPECT_EQ(ts.push(face.substr(3) + "y"), face + "y");
  EXPECT_EQ(ts.push(euro.substr(0, 2)), "");
  EXPECT_EQ(ts.finish(), euro.substr(0, 2));  // the end sends what is left, complete or not
  EXPECT_EQ(ts.sent(), "x" + face + "y" + euro.substr(0, 2));
  EXPECT_FALSE(ts.stopped());
}

TEST(TextStream, StopStringSplitOverPiecesIsNotSent) {
  TextStream ts({"STOP", "\n\n"});
  EXPECT_EQ(ts.push("Hello S"), "Hello ");
  EXPECT_EQ(ts.push("T"), "");
  EXPECT_EQ(ts.push("OP and more"), "");
  EXPECT_TRUE(ts.stopped());
  EXPECT_EQ(ts.push("later"), "");
  EXPECT_EQ(ts.finish(), "");
  EXPECT_EQ(ts.sent(), "Hello ");
}

TEST(TextStream, FalseStartIsSentLater) {
  TextStream ts({"STOP"});
  EXPECT_EQ(ts.push("a ST"), "a ");
  EXPECT_EQ(ts.push("ORE"), "STORE");
  EXPECT_EQ(ts.push(" S"), " ");
  EXPECT_EQ(ts.finish(), "S");
  EXPECT_FALSE(ts.stopped());
  EXPECT_EQ(ts.sent(), "a STORE S");
}

TEST(TextStream, EarliestStopWinsAndEmptyStopsAreIgnored) {
  TextStream ts({"", "cd", "b"});
  EXPECT_EQ(ts.push("abcd"), "a");
  EXPECT_TRUE(ts.stopped());
  TextStream inside({"lo w"});
  EXPECT_EQ(inside.push("hello world"), "hel");
}

}  // namespace
}  // namespace blockq::serve
