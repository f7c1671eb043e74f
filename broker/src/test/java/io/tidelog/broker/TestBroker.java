package io.tidelog.broker;

import io.tidelog.broker.config.BrokerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.utils.Utils;

/**
 * A real broker on free loopback ports with its log directory under a test's temp dir. Unless the
 * overrides name an etcd, it starts its own in a temp dir of its own, deleted on close.
 */
final class TestBroker implements AutoCloseable {
  final Broker broker;
  final int port;
  final int httpPort;
  private final EtcdServer ownEtcd;

  private TestBroker(Broker broker, int port, int httpPort, EtcdServer ownEtcd) {
    this.broker = broker;
    this.port = port;
    this.httpPort = httpPort;
    this.ownEtcd = ownEtcd;
  }

  static TestBroker start(Path logDir, Map<String, String> overrides) throws Exception {
    return start(logDir, overrides, List.of());
  }

  /**
   * Broker {@code id} of a cluster on {@code etcd}, leaders left where elections put them (no
   * automatic preferred-leader rebalance) so that a test decides who leads.
   */
  static TestBroker member(Path logDir, int id, EtcdServer etcd) throws Exception {
    return start(
        logDir,
        Map.of(
            "node.id",
            String.valueOf(id),
            BrokerConfig.ETCD_ENDPOINTS,
            etcd.endpoint(),
            BrokerConfig.AUTO_LEADER_REBALANCE_ENABLE,
            "false"));
  }

  /** A broker that stores {@code addScram} before it serves, as --add-scram does. */
  static TestBroker start(
      Path logDir,
      Map<String, String> overrides,
      List<io.tidelog.broker.security.ScramCredentialSpec> addScram)
      throws Exception {
    return start(logDir, EtcdServer.freePort(), overrides, addScram);
  }

  /** A broker whose PLAINTEXT listener is on {@code port}, to restart it where it was. */
  static TestBroker start(
      Path logDir,
      int port,
      Map<String, String> overrides,
      List<io.tidelog.broker.security.ScramCredentialSpec> addScram)
      throws Exception {
    EtcdServer ownEtcd =
        overrides.containsKey(BrokerConfig.ETCD_ENDPOINTS)
            ? null
            : EtcdServer.start(Files.createTempDirectory("tidelog-etcd"));
    int httpPort = EtcdServer.freePort();
    Map<String, String> config = new HashMap<>();
    config.put("node.id", "0");
    config.put("listeners", "PLAINTEXT://127.0.0.1:" + port);
    if (!overrides.containsKey("listeners")) {
      // as Kafka's nodes in bench/kafka-cluster: a listener can then be added at run time
      config.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
    }
    config.put("log.dirs", logDir.toString());
    config.put("tidelog.http.port", String.valueOf(httpPort));
    config.put("num.io.threads", "2");
    if (ownEtcd != null) {
      config.put(BrokerConfig.ETCD_ENDPOINTS, ownEtcd.endpoint());
    }
    config.putAll(overrides);
    try {
      return new TestBroker(
          Broker.start(BrokerConfig.parse(config), addScram), port, httpPort, ownEtcd);
    } catch (Exception e) {
      closeEtcd(ownEtcd);
      throw e;
    }
  }

  String bootstrap() {
    return "127.0.0.1:" + port;
  }

  @Override
  public void close() throws Exception {
    try {
      broker.close();
    } finally {
      closeEtcd(ownEtcd);
    }
  }

  private static void closeEtcd(EtcdServer etcd) throws Exception {
    if (etcd != null) {
      etcd.close();
      Utils.delete(etcd.dir().toFile());
    }
  }
}
