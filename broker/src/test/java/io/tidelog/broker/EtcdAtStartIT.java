package io.tidelog.broker;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker started while its etcd is down: it stays up, alive and not ready, says why and retries;
 * when etcd returns it joins and serves what its log held before.
 */
class EtcdAtStartIT {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir Path dir;

  @Test
  void aBrokerWaitsForEtcdWithoutLosingItsLog() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir.resolve("etcd"));
        BrokerProcess broker =
            new BrokerProcess(0, dir.resolve("broker-0"), etcd.endpoint(), Map.of())) {
      // Given a broker whose log holds 10 acknowledged records, stopped,
      broker.start();
      String bootstrap = broker.address();
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin.createTopics(List.of(new NewTopic("kept", 1, (short) 1))).all().get();
      }
      try (KafkaProducer<String, String> producer =
          new KafkaProducer<>(
              Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
              new StringSerializer(),
              new StringSerializer())) {
        for (int i = 0; i < 10; i++) {
          producer.send(new ProducerRecord<>("kept", "r" + i)).get();
        }
      }
      broker.stop();

      // when it starts again while etcd is down,
      etcd.stop();
      broker.launch();
      // it stays up, alive and not ready, and says what it waits for, past several retries;
      await().atMost(Duration.ofSeconds(60)).until(() -> broker.log().contains("retrying in 2 s"));
      assertThat(broker.isAlive()).isTrue();
      assertThat(status(broker, "/healthz")).isEqualTo(200);
      assertThat(status(broker, "/readyz")).isEqualTo(503);
      assertThat(broker.log())
          .contains("Cannot read cluster metadata from etcd at [" + etcd.endpoint() + "]");

      // and once etcd is back, it joins and serves the records it had,
      try (Socket probe = new Socket(InetAddress.getLoopbackAddress(), broker.httpPort)) {
        assertThat(get(probe, "/readyz")).isEqualTo(503);
        etcd.start();
        broker.awaitListening();
        // answering on a connection opened while it started: it never let go of its HTTP port.
        await().atMost(Duration.ofSeconds(30)).until(() -> get(probe, "/readyz") == 200);
      }
      assertThat(consumeAll(bootstrap, 10)).containsExactly(expected(10));
    }
  }

  /** The status of a GET of {@code path} sent on the kept-alive HTTP/1.1 connection {@code to}. */
  private static int get(Socket to, String path) throws IOException {
    to.setSoTimeout(5_000);
    OutputStream out = to.getOutputStream();
    out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(US_ASCII));
    out.flush();
    InputStream in = to.getInputStream();
    String statusLine = line(in);
    int length = 0;
    for (String header = line(in); !header.isEmpty(); header = line(in)) {
      if (header.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(header.substring("content-length:".length()).trim());
      }
    }
    in.readNBytes(length);
    return Integer.parseInt(statusLine.split(" ")[1]);
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        throw new EOFException("the broker closed the connection");
      }
      if (line.length() == 8192) {
        throw new IOException("an HTTP line longer than 8 KiB");
      }
      if (c != '\r') {
        line.append((char) c);
      }
    }
    return line.toString();
  }

  private static int status(BrokerProcess broker, String path) {
    try {
      return HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + broker.httpPort + path))
                  .timeout(Duration.ofSeconds(5))
                  .build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (Exception e) {
      return -1;
    }
  }

  private static List<String> consumeAll(String bootstrap, int count) {
    TopicPartition tp = new TopicPartition("kept", 0);
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(
            Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
            new StringDeserializer(),
            new StringDeserializer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (values.size() < count && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> values.add(r.value()));
      }
    }
    return values;
  }

  private static String[] expected(int count) {
    String[] values = new String[count];
    for (int i = 0; i < count; i++) {
      values[i] = "r" + i;
    }
    return values;
  }
}
