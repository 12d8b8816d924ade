// Dynamic loss scaling: halves and skips on overflow, grows after a clean window.
#include <doctest/doctest.h>

#include "optim/loss_scaler.h"

using namespace llmft;

TEST_CASE("loss scale halves on overflow and doubles after a window of clean steps") {
  LossScaler s(LossScaleConfig{true, 1024.0f, 3});
  CHECK(s.scale() == 1024.0f);
  CHECK_FALSE(s.update(true));
  CHECK(s.scale() == 512.0f);
  CHECK(s.update(false));
  CHECK(s.update(false));
  CHECK(s.scale() == 512.0f);
  CHECK(s.update(false));
  CHECK(s.scale() == 1024.0f);
  CHECK(s.update(false));
  CHECK_FALSE(s.update(true));  // an overflow restarts the window
  CHECK(s.scale() == 512.0f);
  CHECK(s.update(false));
  CHECK(s.update(false));
  CHECK(s.scale() == 512.0f);
}

TEST_CASE("without loss scaling the scale stays 1 and only non-finite steps are skipped") {
  LossScaler s(LossScaleConfig{false, 1024.0f, 1});
  CHECK(s.scale() == 1.0f);
  CHECK(s.update(false));
  CHECK(s.scale() == 1.0f);
  CHECK_FALSE(s.update(true));
  CHECK(s.scale() == 1.0f);
}
