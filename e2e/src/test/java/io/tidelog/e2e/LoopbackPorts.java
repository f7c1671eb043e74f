package io.tidelog.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for a process a test starts later. They are taken below Linux's ephemeral range
 * (32768 and up), where the kernel gives outgoing connections their ports: a port of that range,
 * free when a test picked it, can be a client socket's by the time the broker binds it. No port is
 * handed out twice in one JVM.
 */
final class LoopbackPorts {
  private static final int FIRST = 10_000;
  private static final int COUNT = 20_000;
  private static final int ATTEMPTS = 200;
  private static final Set<Integer> HANDED_OUT = new HashSet<>();

  private LoopbackPorts() {}

  /** A port that nothing listens on and that this JVM has not handed out before. */
  static synchronized int free() {
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      int port = FIRST + ThreadLocalRandom.current().nextInt(COUNT);
      if (!HANDED_OUT.contains(port) && isFree(port)) {
        HANDED_OUT.add(port);
        return port;
      }
    }
    throw new UncheckedIOException(new IOException("no free loopback port in " + ATTEMPTS));
  }

  /** Whether nothing listens on {@code port} of the loopback address. */
  static boolean isFree(int port) {
    try (ServerSocket taken = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
