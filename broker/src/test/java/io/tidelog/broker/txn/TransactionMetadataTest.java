package io.tidelog.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.apache.kafka.coordinator.transaction.TxnTransitMetadata;
import org.apache.kafka.server.common.TransactionVersion;
import org.junit.jupiter.api.Test;

/** The epochs and producer ids of transaction protocols 0 and 2, as Kafka's metadata moves them. */
class TransactionMetadataTest {
  private static final TopicPartition TP = new TopicPartition("t", 0);

  @Test
  void protocol2BumpsTheEpochAtTheEndAndTheMarkersCarryIt() {
    TransactionMetadata txn = ongoing((short) 4, TransactionVersion.TV_2);
    txn.complete(
        txn.prepareAbortOrCommit(
            TransactionState.PREPARE_COMMIT,
            TransactionVersion.TV_2,
            RecordBatch.NO_PRODUCER_ID,
            2,
            false));
    assertThat(txn.producerEpoch)
        .as("the markers' and the next transaction's epoch")
        .isEqualTo((short) 5);
    assertThat(txn.lastProducerEpoch).isEqualTo((short) 4);
    txn.complete(txn.prepareComplete(3));
    assertThat(txn.state).isEqualTo(TransactionState.COMPLETE_COMMIT);
    assertThat(txn.producerId).isEqualTo(7);
    assertThat(txn.producerEpoch).isEqualTo((short) 5);
  }

  @Test
  void protocol0KeepsTheEpoch() {
    TransactionMetadata txn = ongoing((short) 4, TransactionVersion.TV_0);
    txn.complete(
        txn.prepareAbortOrCommit(
            TransactionState.PREPARE_ABORT,
            TransactionVersion.TV_0,
            RecordBatch.NO_PRODUCER_ID,
            2,
            false));
    txn.complete(txn.prepareComplete(3));
    assertThat(txn.producerEpoch).isEqualTo((short) 4);
  }

  @Test
  void exhaustedEpochsMoveToTheNextProducerIdOnceTheMarkersAreWritten() {
    short last = (short) (Short.MAX_VALUE - 1);
    TransactionMetadata txn = ongoing(last, TransactionVersion.TV_2);
    assertThat(txn.isProducerEpochExhausted()).isTrue();
    txn.complete(
        txn.prepareAbortOrCommit(
            TransactionState.PREPARE_COMMIT, TransactionVersion.TV_2, 99, 2, false));
    assertThat(txn.producerId).as("the markers' producer id").isEqualTo(7);
    assertThat(txn.producerEpoch).isEqualTo(Short.MAX_VALUE);
    assertThat(txn.nextProducerId).isEqualTo(99);

    TxnTransitMetadata complete = txn.prepareComplete(3);
    txn.complete(complete);
    assertThat(txn.producerId).isEqualTo(99);
    assertThat(txn.producerEpoch).isZero();
    assertThat(txn.previousProducerId).as("to recognise a retry of the EndTxn").isEqualTo(7);
    assertThat(txn.nextProducerId).isEqualTo(RecordBatch.NO_PRODUCER_ID);
  }

  @Test
  void aRecordOfProtocol2KeepsWhatATakingOverCoordinatorNeeds() {
    TransactionMetadata txn = ongoing((short) (Short.MAX_VALUE - 1), TransactionVersion.TV_2);
    TxnTransitMetadata prepared =
        txn.prepareAbortOrCommit(
            TransactionState.PREPARE_ABORT, TransactionVersion.TV_2, 99, 2, false);
    var record = TransactionRecords.of("id", prepared, 2);
    var entry =
        TransactionRecords.parse(
                MemoryRecords.withRecords(Compression.NONE, record).records().iterator().next())
            .orElseThrow();
    TransactionMetadata loaded = TransactionMetadata.loaded("id", entry.value());
    assertThat(loaded.clientTransactionVersion).isEqualTo(TransactionVersion.TV_2);
    assertThat(loaded.nextProducerId).isEqualTo(99);
    assertThat(loaded.producerEpoch).isEqualTo(Short.MAX_VALUE);
    assertThat(loaded.state).isEqualTo(TransactionState.PREPARE_ABORT);
  }

  @Test
  void aWaitForTheIdSettlesWhenTheMarkersAreWrittenOrAChangeIsDropped() {
    TransactionMetadata txn = ongoing((short) 0, TransactionVersion.TV_2);
    assertThat(txn.settled()).isDone();
    txn.complete(
        txn.prepareAbortOrCommit(
            TransactionState.PREPARE_COMMIT,
            TransactionVersion.TV_2,
            RecordBatch.NO_PRODUCER_ID,
            2,
            false));
    CompletableFuture<Void> ending = txn.settled();
    assertThat(ending).as("while the markers are written").isNotDone();
    TxnTransitMetadata complete = txn.prepareComplete(3);
    assertThat(ending).as("while CompleteCommit is written").isNotDone();
    txn.complete(complete);
    assertThat(ending).isDone();

    txn.prepareAddPartitions(Set.of(TP), 4, TransactionVersion.TV_2);
    CompletableFuture<Void> adding = txn.settled();
    assertThat(adding).as("while an add is written").isNotDone();
    txn.abandon();
    assertThat(adding).as("once the add failed").isDone();
  }

  private static TransactionMetadata ongoing(short epoch, TransactionVersion version) {
    TransactionMetadata txn = new TransactionMetadata("id", 7, 60_000, 0);
    txn.producerEpoch = epoch;
    txn.complete(txn.prepareAddPartitions(Set.of(TP), 1, version));
    return txn;
  }
}
