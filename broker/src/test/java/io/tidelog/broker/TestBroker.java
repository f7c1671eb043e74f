package io.tidelog.broker;

import io.tidelog.broker.config.BrokerConfig;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** A real broker on free loopback ports with its log directory under a test's temp dir. */
final class TestBroker implements AutoCloseable {
  final Broker broker;
  final int port;
  final int httpPort;

  private TestBroker(Broker broker, int port, int httpPort) {
    this.broker = broker;
    this.port = port;
    this.httpPort = httpPort;
  }

  static TestBroker start(Path logDir, Map<String, String> overrides) throws Exception {
    int port = freePort();
    int httpPort = freePort();
    Map<String, String> config = new HashMap<>();
    config.put("node.id", "0");
    config.put("listeners", "PLAINTEXT://127.0.0.1:" + port);
    config.put("log.dirs", logDir.toString());
    config.put("tidelog.http.port", String.valueOf(httpPort));
    config.put("num.io.threads", "2");
    config.putAll(overrides);
    return new TestBroker(Broker.start(BrokerConfig.parse(config)), port, httpPort);
  }

  String bootstrap() {
    return "127.0.0.1:" + port;
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  @Override
  public void close() throws Exception {
    broker.close();
  }
}
