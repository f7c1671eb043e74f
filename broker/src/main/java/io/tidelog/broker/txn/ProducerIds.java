package io.tidelog.broker.txn;

import io.tidelog.broker.cluster.MetadataStore;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Producer ids, unique in the cluster: taken from blocks of {@link #BLOCK_SIZE} reserved in etcd,
 * as Kafka's brokers take blocks from the controller. The block is touched only on the single
 * metadata executor, so callers on any thread get a future.
 */
public final class ProducerIds {
  private static final int BLOCK_SIZE = 1000;
  private final MetadataStore metadata;
  private final Executor metadataExecutor;
  private long nextId;
  private long blockEnd;

  public ProducerIds(MetadataStore metadata, Executor metadataExecutor) {
    this.metadata = metadata;
    this.metadataExecutor = metadataExecutor;
  }

  public CompletableFuture<Long> next() {
    return CompletableFuture.supplyAsync(
        () -> {
          if (nextId == blockEnd) {
            nextId = metadata.allocateProducerIds(BLOCK_SIZE);
            blockEnd = nextId + BLOCK_SIZE;
          }
          return nextId++;
        },
        metadataExecutor);
  }
}
