package io.tidelog.e2e;

import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * The Kafka Streams application {@link KafkaStreamsIT} runs in a process of its own and kills: it
 * counts the records of each key of the input topic with {@code processing.guarantee=
 * exactly_once_v2}, in an in-memory store (restored from its changelog after a crash), without a
 * record cache, so that every input record makes one output record, the key's new count.
 *
 * <p>Arguments: bootstrap servers, application id, input topic, output topic, state directory.
 */
public final class StreamsCountApp {
  private StreamsCountApp() {}

  public static void main(String[] args) throws InterruptedException {
    Properties config = new Properties();
    config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    config.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
    config.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
    config.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    config.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    config.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2);
    config.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
    // a killed instance's member leaves the group after this, so that its tasks move
    config.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 6_000);
    config.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), 1_000);
    StreamsBuilder builder = new StreamsBuilder();
    builder.stream(args[2], Consumed.with(Serdes.String(), Serdes.String()))
        .groupByKey()
        .count(Materialized.as(Stores.inMemoryKeyValueStore("counts")))
        .toStream()
        .to(args[3], Produced.with(Serdes.String(), Serdes.Long()));
    KafkaStreams streams = new KafkaStreams(builder.build(), config);
    CountDownLatch stopped = new CountDownLatch(1);
    streams.setStateListener(
        (now, before) -> {
          System.out.println("state " + before + " -> " + now);
          if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
            stopped.countDown();
          }
        });
    Runtime.getRuntime().addShutdownHook(new Thread(streams::close));
    streams.start();
    stopped.await();
  }
}
