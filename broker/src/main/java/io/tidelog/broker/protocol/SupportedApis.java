package io.tidelog.broker.protocol;

import java.util.EnumMap;
import java.util.Map;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersionCollection;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;

/**
 * The APIs and versions the broker serves, and advertises in ApiVersions: exactly what works.
 * Ranges stay within what kafka-clients (pinned in the parent POM) can parse.
 */
final class SupportedApis {
  /**
   * Produce v0-2 are advertised, as Kafka does, so that librdkafka keeps compressing; they are
   * refused.
   */
  static final short PRODUCE_MIN_SERVED = 3;

  private static final Map<ApiKeys, short[]> RANGES = new EnumMap<>(ApiKeys.class);

  static {
    RANGES.put(ApiKeys.API_VERSIONS, new short[] {0, 4});
    RANGES.put(ApiKeys.METADATA, new short[] {0, 12});
    RANGES.put(ApiKeys.PRODUCE, new short[] {0, 12});
    RANGES.put(ApiKeys.FETCH, new short[] {4, 12});
    RANGES.put(ApiKeys.LIST_OFFSETS, new short[] {1, 7});
    RANGES.put(ApiKeys.CREATE_TOPICS, new short[] {2, 7});
    RANGES.put(ApiKeys.DELETE_TOPICS, new short[] {1, 6});
    RANGES.put(ApiKeys.INIT_PRODUCER_ID, new short[] {0, 5});
    RANGES.put(ApiKeys.OFFSET_FOR_LEADER_EPOCH, new short[] {2, 4});
    RANGES.put(ApiKeys.DELETE_RECORDS, new short[] {0, 2});
    RANGES.put(ApiKeys.CREATE_PARTITIONS, new short[] {0, 3});
    RANGES.put(ApiKeys.DESCRIBE_CONFIGS, new short[] {1, 4});
    RANGES.put(ApiKeys.DESCRIBE_LOG_DIRS, new short[] {1, 4});
    RANGES.put(ApiKeys.DESCRIBE_PRODUCERS, new short[] {0, 0});
    RANGES.put(ApiKeys.ELECT_LEADERS, new short[] {0, 2});
    RANGES.put(ApiKeys.WRITE_TXN_MARKERS, new short[] {1, 1});
    // transaction protocol versions 0 and 1: EndTxn v5 and TxnOffsetCommit v5 are KIP-890's
    // version 2, which a client uses only once the transaction.version feature says 2
    RANGES.put(ApiKeys.ADD_PARTITIONS_TO_TXN, new short[] {0, 5});
    RANGES.put(ApiKeys.ADD_OFFSETS_TO_TXN, new short[] {0, 4});
    RANGES.put(ApiKeys.END_TXN, new short[] {0, 4});
    RANGES.put(ApiKeys.TXN_OFFSET_COMMIT, new short[] {0, 4});
    RANGES.put(ApiKeys.DESCRIBE_TRANSACTIONS, new short[] {0, 0});
    RANGES.put(ApiKeys.LIST_TRANSACTIONS, new short[] {0, 2});
    RANGES.put(ApiKeys.ALTER_CONFIGS, new short[] {0, 2});
    RANGES.put(ApiKeys.INCREMENTAL_ALTER_CONFIGS, new short[] {0, 1});
    RANGES.put(ApiKeys.DESCRIBE_CLUSTER, new short[] {0, 1});
    RANGES.put(ApiKeys.FIND_COORDINATOR, new short[] {0, 4});
    RANGES.put(ApiKeys.JOIN_GROUP, new short[] {0, 9});
    RANGES.put(ApiKeys.SYNC_GROUP, new short[] {0, 5});
    RANGES.put(ApiKeys.HEARTBEAT, new short[] {0, 4});
    RANGES.put(ApiKeys.LEAVE_GROUP, new short[] {0, 5});
    RANGES.put(ApiKeys.OFFSET_COMMIT, new short[] {2, 9});
    RANGES.put(ApiKeys.OFFSET_FETCH, new short[] {1, 9});
    RANGES.put(ApiKeys.LIST_GROUPS, new short[] {0, 5});
    RANGES.put(ApiKeys.DESCRIBE_GROUPS, new short[] {0, 5});
    RANGES.put(ApiKeys.DELETE_GROUPS, new short[] {0, 2});
    RANGES.put(ApiKeys.OFFSET_DELETE, new short[] {0, 0});
    // librdkafka looks for v0 to know the broker takes SASL at all
    RANGES.put(ApiKeys.SASL_HANDSHAKE, new short[] {0, 1});
    RANGES.put(ApiKeys.SASL_AUTHENTICATE, new short[] {0, 2});
    RANGES.put(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, new short[] {0, 0});
    RANGES.put(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, new short[] {0, 0});
    RANGES.put(ApiKeys.CREATE_ACLS, new short[] {1, 3});
    RANGES.put(ApiKeys.DESCRIBE_ACLS, new short[] {1, 3});
    RANGES.put(ApiKeys.DELETE_ACLS, new short[] {1, 3});
    RANGES.put(ApiKeys.DESCRIBE_CLIENT_QUOTAS, new short[] {0, 1});
    RANGES.put(ApiKeys.ALTER_CLIENT_QUOTAS, new short[] {0, 1});
  }

  private SupportedApis() {}

  /** The APIs served. */
  static java.util.Set<ApiKeys> served() {
    return RANGES.keySet();
  }

  static boolean isServed(ApiKeys api, short version) {
    short[] range = RANGES.get(api);
    short min = api == ApiKeys.PRODUCE ? PRODUCE_MIN_SERVED : range == null ? 0 : range[0];
    return range != null && version >= min && version <= range[1];
  }

  static ApiVersionsResponseData apiVersions(Errors error) {
    ApiVersionCollection versions = new ApiVersionCollection();
    RANGES.forEach(
        (api, range) ->
            versions.add(
                new ApiVersion()
                    .setApiKey(api.id)
                    .setMinVersion(range[0])
                    .setMaxVersion(range[1])));
    return new ApiVersionsResponseData().setErrorCode(error.code()).setApiKeys(versions);
  }
}
