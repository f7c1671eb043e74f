package io.tidelog.broker.protocol;

import java.util.EnumMap;
import java.util.Map;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersionCollection;
import org.apache.kafka.common.message.ApiVersionsResponseData.FinalizedFeatureKey;
import org.apache.kafka.common.message.ApiVersionsResponseData.FinalizedFeatureKeyCollection;
import org.apache.kafka.common.message.ApiVersionsResponseData.SupportedFeatureKey;
import org.apache.kafka.common.message.ApiVersionsResponseData.SupportedFeatureKeyCollection;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.server.common.TransactionVersion;

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

  /** The transaction protocol every broker finalizes: KIP-890's epoch bump per transaction. */
  static final TransactionVersion TRANSACTION_VERSION = TransactionVersion.TV_2;

  private static final long FINALIZED_FEATURES_EPOCH = 1;

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
    RANGES.put(ApiKeys.ALTER_REPLICA_LOG_DIRS, new short[] {1, 2});
    RANGES.put(ApiKeys.DESCRIBE_PRODUCERS, new short[] {0, 0});
    RANGES.put(ApiKeys.ELECT_LEADERS, new short[] {0, 2});
    RANGES.put(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, new short[] {0, 1});
    RANGES.put(ApiKeys.LIST_PARTITION_REASSIGNMENTS, new short[] {0, 0});
    RANGES.put(ApiKeys.WRITE_TXN_MARKERS, new short[] {1, 1});
    // EndTxn v5, TxnOffsetCommit v5 and Produce v12 are transaction protocol 2 (KIP-890), which
    // a client uses once the transaction.version feature says 2
    RANGES.put(ApiKeys.ADD_PARTITIONS_TO_TXN, new short[] {0, 5});
    RANGES.put(ApiKeys.ADD_OFFSETS_TO_TXN, new short[] {0, 4});
    RANGES.put(ApiKeys.END_TXN, new short[] {0, 5});
    RANGES.put(ApiKeys.TXN_OFFSET_COMMIT, new short[] {0, 5});
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

  /**
   * ApiVersions' answer. From v3 it names the features: {@code transaction.version} 2, finalized at
   * the same level on every broker (a constant epoch, as nothing changes it), so that clients speak
   * transaction protocol 2.
   */
  static ApiVersionsResponseData apiVersions(Errors error, short version) {
    ApiVersionsResponseData data = apiVersions(error);
    if (version >= 3) {
      SupportedFeatureKeyCollection supported = new SupportedFeatureKeyCollection();
      supported.add(
          new SupportedFeatureKey()
              .setName(TransactionVersion.FEATURE_NAME)
              .setMinVersion((short) 0)
              .setMaxVersion(TRANSACTION_VERSION.featureLevel()));
      FinalizedFeatureKeyCollection finalized = new FinalizedFeatureKeyCollection();
      finalized.add(
          new FinalizedFeatureKey()
              .setName(TransactionVersion.FEATURE_NAME)
              .setMinVersionLevel(TRANSACTION_VERSION.featureLevel())
              .setMaxVersionLevel(TRANSACTION_VERSION.featureLevel()));
      data.setSupportedFeatures(supported)
          .setFinalizedFeatures(finalized)
          .setFinalizedFeaturesEpoch(FINALIZED_FEATURES_EPOCH);
    }
    return data;
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
