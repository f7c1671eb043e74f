package io.tidelog.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.operator.cluster.BrokerView.PartitionView;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BrokerViewTest {
  @Test
  void aPartitionsReplicationFactorLeavesOutOnlyTheReplicasAMoveStillRemoves() {
    // moving off 3 and 4: five replicas now, three once done
    assertThat(
            new PartitionView(
                    "t-0", List.of(0, 1, 2, 3, 4), Set.of(0, 1, 2, 3, 4), 2, List.of(3, 4))
                .replicationFactor())
        .isEqualTo(3);
    // the move ended between the reads: 3 and 4 are gone already
    assertThat(
            new PartitionView("t-0", List.of(0, 1, 2), Set.of(0, 1, 2), 2, List.of(3, 4))
                .replicationFactor())
        .isEqualTo(3);
    assertThat(new PartitionView("t-0", List.of(0, 1, 2), Set.of(0, 1, 2), 2).replicationFactor())
        .isEqualTo(3);
  }
}
