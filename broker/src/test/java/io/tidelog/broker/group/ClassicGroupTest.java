package io.tidelog.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.broker.group.ClassicGroup.JoinRequest;
import io.tidelog.broker.group.ClassicGroup.JoinResult;
import io.tidelog.broker.group.ClassicGroup.Protocol;
import io.tidelog.broker.group.ClassicGroup.State;
import io.tidelog.broker.group.ClassicGroup.SyncResult;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/** The classic group protocol's membership rules, driven step by step with explicit time. */
class ClassicGroupTest {
  private static final int SESSION_MS = 10_000;
  private static final int REBALANCE_MS = 30_000;

  /** group.initial.rebalance.delay.ms: members joining an empty group within it join together */
  private static final int INITIAL_DELAY_MS = 100;

  private final ClassicGroup group = new ClassicGroup("g", INITIAL_DELAY_MS, 0);

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static JoinRequest request(String memberId, String instanceId, String... protocols) {
    List<Protocol> supported =
        java.util.Arrays.stream(protocols).map(p -> new Protocol(p, bytes("meta-" + p))).toList();
    return new JoinRequest(
        memberId,
        instanceId,
        "client",
        "/127.0.0.1",
        "consumer",
        supported,
        SESSION_MS,
        REBALANCE_MS,
        true);
  }

  /** The result of a future that must be complete by now: the group answers without waiting. */
  private static <T> T done(CompletableFuture<T> future) {
    assertThat(future).isDone();
    return future.join();
  }

  /** KIP-394: the first JoinGroup gets an id, the second joins with it. */
  private CompletableFuture<JoinResult> joinAsNewMember(long nowMs, String... protocols) {
    JoinResult first = done(group.join(request("", null, protocols), nowMs));
    assertThat(first.error()).isEqualTo(Errors.MEMBER_ID_REQUIRED);
    assertThat(first.memberId()).startsWith("client-");
    return group.join(request(first.memberId(), null, protocols), nowMs);
  }

  /** Two members joined and synced at generation 1, {@code a} leading, at time 100. */
  private String[] stableGroupOfTwo() {
    CompletableFuture<JoinResult> a = joinAsNewMember(0, "range");
    CompletableFuture<JoinResult> b = joinAsNewMember(0, "range");
    group.tick(INITIAL_DELAY_MS);
    String aId = done(a).memberId();
    String bId = done(b).memberId();
    CompletableFuture<SyncResult> bSync =
        group.sync(bId, null, 1, null, null, Map.of(), INITIAL_DELAY_MS);
    done(
        group.sync(
            aId,
            null,
            1,
            null,
            null,
            Map.of(aId, bytes("a1"), bId, bytes("b1")),
            INITIAL_DELAY_MS));
    assertThat(done(bSync).assignment()).isEqualTo(bytes("b1"));
    return new String[] {aId, bId};
  }

  @Test
  void membersJoinThenTheLeadersAssignmentReachesEveryoneThroughSync() {
    CompletableFuture<JoinResult> a = joinAsNewMember(0, "range");
    CompletableFuture<JoinResult> b = joinAsNewMember(0, "range");
    assertThat(a).isNotDone();
    group.tick(INITIAL_DELAY_MS);

    // Both have joined: one generation, one leader, who alone sees the members
    JoinResult joinedA = done(a);
    JoinResult joinedB = done(b);
    assertThat(joinedA.generation()).isEqualTo(1).isEqualTo(joinedB.generation());
    assertThat(joinedA.protocolName()).isEqualTo("range");
    assertThat(joinedA.leaderId()).isEqualTo(joinedA.memberId()).isEqualTo(joinedB.leaderId());
    assertThat(joinedA.members())
        .extracting(ClassicGroup.JoinedMember::memberId)
        .containsExactly(joinedA.memberId(), joinedB.memberId());
    assertThat(joinedA.members().get(1).metadata()).isEqualTo(bytes("meta-range"));
    assertThat(joinedB.members()).isEmpty();
    assertThat(group.state()).isEqualTo(State.COMPLETING_REBALANCE);

    CompletableFuture<SyncResult> followerSync =
        group.sync(joinedB.memberId(), null, 1, null, null, Map.of(), 1);
    assertThat(followerSync).isNotDone();
    SyncResult leaderSync =
        done(
            group.sync(
                joinedA.memberId(),
                null,
                1,
                null,
                null,
                Map.of(joinedA.memberId(), bytes("p0"), joinedB.memberId(), bytes("p1")),
                1));

    assertThat(leaderSync.assignment()).isEqualTo(bytes("p0"));
    assertThat(done(followerSync).assignment()).isEqualTo(bytes("p1"));
    assertThat(group.state()).isEqualTo(State.STABLE);
    assertThat(group.heartbeat(joinedB.memberId(), null, 1, 2)).isEqualTo(Errors.NONE);
    assertThat(group.heartbeat(joinedB.memberId(), null, 0, 2))
        .isEqualTo(Errors.ILLEGAL_GENERATION);
    assertThat(group.heartbeat("stranger", null, 1, 2)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
  }

  @Test
  void aMemberThatStopsHeartbeatingIsRemovedAndTheOthersRebalance() {
    String[] ids = stableGroupOfTwo();

    group.heartbeat(ids[0], null, 1, SESSION_MS);
    group.tick(SESSION_MS + INITIAL_DELAY_MS);

    assertThat(group.state()).isEqualTo(State.PREPARING_REBALANCE);
    assertThat(group.heartbeat(ids[0], null, 1, SESSION_MS + 101))
        .isEqualTo(Errors.REBALANCE_IN_PROGRESS);
    JoinResult rejoined = done(group.join(request(ids[0], null, "range"), SESSION_MS + 102));
    assertThat(rejoined.generation()).isEqualTo(2);
    assertThat(rejoined.members()).hasSize(1);
  }

  @Test
  void aRebalanceEndsAtTheRebalanceTimeoutWithoutTheMembersThatDidNotJoin() {
    String[] ids = stableGroupOfTwo();

    CompletableFuture<JoinResult> c = joinAsNewMember(200, "range");
    CompletableFuture<JoinResult> a = group.join(request(ids[0], null, "range"), 201);
    assertThat(a).isNotDone();
    // b keeps heartbeating, and is told to rejoin, but never does
    for (int t = 5_000; t < 200 + REBALANCE_MS; t += 5_000) {
      assertThat(group.heartbeat(ids[1], null, 1, t)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
      group.tick(t);
    }
    assertThat(group.nextDeadlineMs()).isEqualTo(200 + REBALANCE_MS);

    group.tick(200 + REBALANCE_MS);

    assertThat(done(a).members())
        .extracting(ClassicGroup.JoinedMember::memberId)
        .containsExactly(ids[0], done(c).memberId());
    assertThat(group.heartbeat(ids[1], null, 2, 200 + REBALANCE_MS))
        .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
  }

  @Test
  void aLeavingMemberStartsARebalanceAndTheLastOneEmptiesTheGroup() {
    String[] ids = stableGroupOfTwo();

    assertThat(group.leave(ids[1], null, 200)).isEqualTo(Errors.NONE);
    assertThat(group.state()).isEqualTo(State.PREPARING_REBALANCE);
    assertThat(done(group.join(request(ids[0], null, "range"), 201)).members()).hasSize(1);
    assertThat(group.leave(ids[0], null, 202)).isEqualTo(Errors.NONE);

    assertThat(group.state()).isEqualTo(State.EMPTY);
    assertThat(group.size()).isZero();
    assertThat(group.leave(ids[0], null, 203)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
  }

  @Test
  void theProtocolIsTheCommonOneMostMembersPreferAndAnIncompatibleMemberIsRefused() {
    CompletableFuture<JoinResult> a = joinAsNewMember(0, "range", "roundrobin");
    CompletableFuture<JoinResult> b = joinAsNewMember(0, "roundrobin", "range");
    CompletableFuture<JoinResult> c = joinAsNewMember(0, "roundrobin", "sticky");
    group.tick(INITIAL_DELAY_MS);

    assertThat(done(a).protocolName()).isEqualTo("roundrobin");
    assertThat(done(group.join(request("", null, "sticky"), 1)).error())
        .isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
    assertThat(done(b).generation()).isEqualTo(done(c).generation());
  }

  @Test
  void aStaticMemberRejoiningWithTheSameProtocolTakesItsPlaceWithoutARebalance() {
    CompletableFuture<JoinResult> joining = group.join(request("", "instance-1", "range"), 0);
    group.tick(INITIAL_DELAY_MS);
    JoinResult first = done(joining);
    done(
        group.sync(
            first.memberId(),
            "instance-1",
            1,
            null,
            null,
            Map.of(first.memberId(), bytes("p0")),
            0));

    // Restarted, it joins without a member id, with other metadata (it owns nothing yet)
    JoinRequest restarted = request("", "instance-1", "range");
    JoinResult again =
        done(
            group.join(
                new JoinRequest(
                    restarted.memberId(),
                    restarted.groupInstanceId(),
                    restarted.clientId(),
                    restarted.clientHost(),
                    restarted.protocolType(),
                    List.of(new Protocol("range", bytes("owns-nothing"))),
                    restarted.sessionTimeoutMs(),
                    restarted.rebalanceTimeoutMs(),
                    restarted.requireKnownMemberId()),
                5));

    assertThat(again.error()).isEqualTo(Errors.NONE);
    assertThat(again.memberId()).isNotEqualTo(first.memberId());
    assertThat(again.generation()).isEqualTo(1);
    assertThat(group.state()).isEqualTo(State.STABLE);
    assertThat(
            done(group.sync(again.memberId(), "instance-1", 1, null, null, Map.of(), 6))
                .assignment())
        .isEqualTo(bytes("p0"));
    assertThat(group.heartbeat(first.memberId(), "instance-1", 1, 6))
        .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
  }

  @Test
  void anEmptyGroupWaitsTheInitialRebalanceDelayForMoreMembers() {
    ClassicGroup delayed = new ClassicGroup("d", 3000, 0);
    CompletableFuture<JoinResult> a =
        delayed.join(
            new JoinRequest(
                "",
                null,
                "client",
                "/127.0.0.1",
                "consumer",
                List.of(new Protocol("range", bytes("m"))),
                SESSION_MS,
                REBALANCE_MS,
                false),
            0);

    assertThat(a).isNotDone();
    assertThat(delayed.nextDeadlineMs()).isEqualTo(3000);
    delayed.tick(2999);
    assertThat(a).isNotDone();
    delayed.tick(3000);
    assertThat(done(a).generation()).isEqualTo(1);
  }
}
