# Sample: an analysis whose verdict depends on runif() seeded from the clock.
# Bug: the "significance" threshold is compared with a mean of too few draws, so the script
# flips between PASS and FAIL from run to run (no set.seed).
x <- runif(5)
started <- Sys.time()
cat("draws:", format(x, digits = 4), "\n")
cat("at:", format(started, "%Y-%m-%d %H:%M:%OS3"), "\n")
m <- mean(x)
if (m > 0.6) {
  cat("FAIL: mean", format(m, digits = 4), "above threshold\n")
  quit(status = 1)
}
cat("ok: mean", format(m, digits = 4), "\n")
