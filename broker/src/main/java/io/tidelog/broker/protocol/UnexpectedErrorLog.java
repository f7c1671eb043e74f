package io.tidelog.broker.protocol;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.protocol.ApiKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log of errors the broker did not expect while serving a request (those answered with
 * UNKNOWN_SERVER_ERROR): the first of each kind (the API and the exception's class) with its stack
 * trace, then at most one line a {@link #INTERVAL_MS minute} for that kind, saying how many more
 * there were. A client that makes the same request fail a thousand times a second gets one line,
 * not a thousand stack traces; nothing is lost that the first did not say.
 */
final class UnexpectedErrorLog {
  static final long INTERVAL_MS = 60_000;
  private static final Logger LOG = LoggerFactory.getLogger(UnexpectedErrorLog.class);

  /** One kind's window: when it was last logged and how many went unlogged since. */
  private static final class Window {
    private long loggedAtMs;
    private long suppressed;
  }

  /** Keyed by API and exception class: as many as the code has, not as the clients send. */
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  /**
   * Logs {@code error} unless one of its kind was logged within the interval.
   *
   * @return whether it was logged
   */
  boolean log(ApiKeys api, String request, Throwable error, long nowMs) {
    Window window =
        windows.computeIfAbsent(api.name() + " " + error.getClass().getName(), k -> new Window());
    long suppressed;
    boolean first;
    synchronized (window) {
      first = window.loggedAtMs == 0;
      if (!first && nowMs - window.loggedAtMs < INTERVAL_MS) {
        window.suppressed++;
        return false;
      }
      suppressed = window.suppressed;
      window.suppressed = 0;
      window.loggedAtMs = Math.max(1, nowMs);
    }
    if (first) {
      LOG.error("Unexpected error serving {}", request, error);
    } else {
      LOG.error(
          "Unexpected error serving {}: {} ({} more of this kind in the last {} s, logged without"
              + " their stack trace)",
          request,
          error.toString(),
          suppressed,
          (INTERVAL_MS + 999) / 1000);
    }
    return true;
  }
}
