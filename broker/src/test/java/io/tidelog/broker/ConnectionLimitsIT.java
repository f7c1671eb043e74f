package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidelog.broker.config.BrokerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka's connection limits on the listener, from raw sockets: {@code max.connections.per.ip} and
 * {@code max.connections} close a connection beyond them on arrival while the others are served,
 * and free a slot when one closes; {@code connections.max.idle.ms} closes a silent connection (a
 * slowloris holding a slot) and keeps a talking one.
 */
class ConnectionLimitsIT {
  private static final int CLOSE_WAIT_MS = 5_000;

  @TempDir Path dir;

  @Test
  void connectionsBeyondThePerIpLimitAreClosedAndASlotFreesWhenOneCloses() throws Exception {
    assertLimit(BrokerConfig.MAX_CONNECTIONS_PER_IP);
  }

  @Test
  void connectionsBeyondTheListenerLimitAreClosedAndASlotFreesWhenOneCloses() throws Exception {
    assertLimit(BrokerConfig.MAX_CONNECTIONS);
  }

  private void assertLimit(String limit) throws Exception {
    try (TestBroker broker = TestBroker.start(dir.resolve("logs"), Map.of(limit, "3"))) {
      List<RawKafkaClient> clients = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          RawKafkaClient client = new RawKafkaClient(broker.port, CLOSE_WAIT_MS);
          clients.add(client);
          assertServed(client);
        }
        try (RawKafkaClient fourth = new RawKafkaClient(broker.port, CLOSE_WAIT_MS)) {
          assertThat(fourth.closedByBroker()).isTrue();
        }
        assertServed(clients.get(0)); // the others are still served
        assertThat(
                Scrape.of(broker.httpPort)
                    .value("tidelog_connections_refused_total", "limit", limit))
            .isEqualTo(1);

        clients.remove(0).close();
        await()
            .atMost(Duration.ofSeconds(10))
            .untilAsserted(
                () ->
                    assertThat(Scrape.of(broker.httpPort).value("tidelog_connections"))
                        .isEqualTo(2));
        try (RawKafkaClient another = new RawKafkaClient(broker.port, CLOSE_WAIT_MS)) {
          assertServed(another);
        }
      } finally {
        for (RawKafkaClient client : clients) {
          client.close();
        }
      }
    }
  }

  @Test
  void anIdleConnectionIsClosedAndATalkingOneIsNot() throws Exception {
    try (TestBroker broker =
            TestBroker.start(
                dir.resolve("logs"), Map.of(BrokerConfig.CONNECTIONS_MAX_IDLE_MS, "1000"));
        RawKafkaClient silent = new RawKafkaClient(broker.port, CLOSE_WAIT_MS);
        RawKafkaClient talking = new RawKafkaClient(broker.port, CLOSE_WAIT_MS)) {
      // Half a request frame, then nothing: the slowloris pattern
      silent.sendBytes(new byte[] {0, 0, 0, 100, 0, 18});
      long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
      while (System.nanoTime() < deadline) {
        assertServed(talking);
        Thread.sleep(300);
      }
      assertThat(silent.closedByBroker()).isTrue();
      assertServed(talking);
    }
  }

  private static void assertServed(RawKafkaClient client) throws Exception {
    ApiVersionsResponse response =
        (ApiVersionsResponse) client.send(new ApiVersionsRequest.Builder().build((short) 3));
    assertThat(response.data().errorCode()).isZero();
  }
}
