package io.tidelog.flink;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * A Flink job, unmodified Flink and Flink's Kafka connector: copies every line of one topic to
 * another with the Kafka sink's delivery guarantee, on a local MiniCluster of two slots, with a
 * checkpoint every 200 ms. One of the two copying tasks fails once, after a checkpoint completed
 * and after it has copied some lines, and Flink restarts the job from its last checkpoint.
 *
 * <p>Arguments: bootstrap servers, input topic, output topic, {@code EXACTLY_ONCE} or {@code
 * AT_LEAST_ONCE}, the lines the failing task copies before it fails.
 */
public final class CopyJob {
  private CopyJob() {}

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String input = args[1];
    String output = args[2];
    DeliveryGuarantee guarantee = DeliveryGuarantee.valueOf(args[3]);
    long failAfter = Long.parseLong(args[4]);

    Configuration config = new Configuration();
    config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.setParallelism(2);
    env.enableCheckpointing(200);

    KafkaSource<String> source =
        KafkaSource.<String>builder()
            .setBootstrapServers(bootstrap)
            .setTopics(input)
            .setGroupId("flink-copy")
            .setStartingOffsets(OffsetsInitializer.earliest())
            .setBounded(OffsetsInitializer.latest())
            .setValueOnlyDeserializer(new SimpleStringSchema())
            .build();
    KafkaSink<String> sink =
        KafkaSink.<String>builder()
            .setBootstrapServers(bootstrap)
            .setRecordSerializer(
                KafkaRecordSerializationSchema.builder()
                    .setTopic(output)
                    .setValueSerializationSchema(new SimpleStringSchema())
                    .build())
            .setDeliveryGuarantee(guarantee)
            .setTransactionalIdPrefix("copy-" + guarantee)
            .setProperty("transaction.timeout.ms", "60000")
            .build();
    env.fromSource(source, WatermarkStrategy.noWatermarks(), input)
        .map(new FailOnce(failAfter))
        .sinkTo(sink);
    env.execute("copy " + input + " to " + output);
  }

  /**
   * Passes lines on, pausing a millisecond every 20 so that the job spans several checkpoints; in
   * its first attempt, the first task fails once a checkpoint has completed and it has passed
   * {@code failAfter} lines.
   */
  private static final class FailOnce extends RichMapFunction<String, String>
      implements CheckpointListener {
    private final long failAfter;
    private transient boolean failing;
    private transient boolean checkpointed;
    private transient long passed;

    FailOnce(long failAfter) {
      this.failAfter = failAfter;
    }

    @Override
    public void open(OpenContext context) {
      failing =
          getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0
              && getRuntimeContext().getTaskInfo().getAttemptNumber() == 0;
    }

    @Override
    public String map(String line) throws Exception {
      passed++;
      if (passed % 20 == 0) {
        Thread.sleep(1);
      }
      if (failing && checkpointed && passed >= failAfter) {
        throw new IllegalStateException("failing once, after " + passed + " lines");
      }
      return line;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      checkpointed = true;
    }
  }
}
