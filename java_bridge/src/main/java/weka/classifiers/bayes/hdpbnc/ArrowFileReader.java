/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import java.util.Set;
import java.util.TreeSet;

/**
 * A small reader of Arrow IPC <em>files</em> (the random-access format: magic, messages, footer),
 * reading the file's flatbuffers itself, every read bounds-checked, so that it needs neither arrow-vector
 * nor arrow-memory (and no {@code --add-opens} on JDK 17), and a corrupt file is an {@link IOException},
 * never an allocation its size does not justify.
 *
 * <p>It reads what the hdp-bnc model file uses: uncompressed, non-dictionary columns of type uint16, int32
 * and float64, with or without nulls, lists and structs of them (without null lists, structs or items: the
 * model file's cells), and the schema's custom metadata; a field of another type gets a type name of its
 * own ({@link Field#typeString()}) and its batches are not read. hdp_plugin reads model files by the same
 * rules ({@code hdp_plugin/data/_ipc_flat.py}), so that both readers refuse the same files.
 *
 * <p>Layout (Arrow columnar format, "IPC File Format"): {@code ARROW1} plus 2 bytes of padding; the
 * stream messages; the footer flatbuffer; its length as a little-endian int32; {@code ARROW1}. Each
 * record batch block points at an encapsulated message ({@code 0xFFFFFFFF}, an int32 metadata length,
 * the {@code Message} flatbuffer, padding) followed by the message body, which holds the buffers: depth
 * first, one field node per field and, per field, the validity buffer and then the data buffer
 * (fixed-width types), the int32 offsets (a list, whose item field follows), or nothing more (a struct,
 * whose fields follow).
 */
public final class ArrowFileReader {

  /** The column types this reader understands. */
  public enum ColumnType {
    UINT16("uint16", 2), INT32("int32", 4), FLOAT64("double", 8),
    /** A list: {@link Column#offsets} holds each row's first item, {@link Column#children} the items. */
    LIST("list", 0),
    /** A struct: {@link Column#children} holds its fields, each as long as the struct. */
    STRUCT("struct", 0),
    /** A type this reader does not read ({@link Field#typeString()} names it). */
    OTHER("other", 0);

    /** The type's name as pyarrow prints it. */
    final String arrowName;
    /** Bytes per value of a fixed-width type, else 0. */
    final int width;

    ColumnType(String arrowName, int width) {
      this.arrowName = arrowName;
      this.width = width;
    }
  }

  /** A field of the schema: its name, type, nullability and, for a list or a struct, its child fields. */
  public static final class Field {
    /** The field's name. */
    public final String name;
    /** Its type. */
    public final ColumnType type;
    /** Its type's name: {@link ColumnType#arrowName}, or for {@link ColumnType#OTHER} what it is. */
    final String typeName;
    /** Whether the schema lets it hold nulls. */
    public final boolean nullable;
    /** A list's item field, a struct's fields; empty for the others. */
    public final List<Field> children;

    Field(String name, ColumnType type, String typeName, boolean nullable, List<Field> children) {
      this.name = name;
      this.type = type;
      this.typeName = typeName;
      this.nullable = nullable;
      this.children = Collections.unmodifiableList(children);
    }

    /**
     * The type as pyarrow compares types: a list's or a struct's child fields with their
     * nullability, a struct's fields with their names (a list's item name does not count); a type of no
     * other field shows its children as {@code int64<...>}.
     *
     * @return for instance {@code list<struct<value: uint16 not null, log_prob: double not null> not null>}
     */
    public String typeString() {
      if (type == ColumnType.LIST) {
        Field item = children.get(0);
        return "list<" + item.typeString() + (item.nullable ? "" : " not null") + ">";
      }
      if (type == ColumnType.STRUCT) {
        StringBuilder sb = new StringBuilder("struct<");
        for (int i = 0; i < children.size(); i++) {
          Field c = children.get(i);
          sb.append(i > 0 ? ", " : "").append(c.name).append(": ").append(c.typeString())
            .append(c.nullable ? "" : " not null");
        }
        return sb.append('>').toString();
      }
      if (children.isEmpty()) {
        return typeName;
      }
      StringBuilder sb = new StringBuilder(typeName).append('<');
      for (int i = 0; i < children.size(); i++) {
        sb.append(i > 0 ? ", " : "").append(children.get(i));
      }
      return sb.append('>').toString();
    }

    /** @return {@code name: type}, the type as {@link #typeString()} */
    @Override
    public String toString() {
      return name + ": " + typeString();
    }

    /** Whether this reader decodes the field's columns (its type and its children's). */
    boolean supported() {
      if (type == ColumnType.OTHER) {
        return false;
      }
      for (Field c : children) {
        if (!c.supported()) {
          return false;
        }
      }
      return true;
    }

    /** Field nodes of this field and its children. */
    int fieldNodes() {
      int n = 1;
      for (Field c : children) {
        n += c.fieldNodes();
      }
      return n;
    }

    /** Buffers of this field and its children. */
    int buffers() {
      int n = type == ColumnType.STRUCT ? 1 : 2;
      for (Field c : children) {
        n += c.buffers();
      }
      return n;
    }
  }

  /** One column of one record batch, decoded into plain Java arrays. */
  public static final class Column {
    /** The field's name. */
    public final String name;
    /** The column's type. */
    public final ColumnType type;
    /** Number of rows. */
    public final int length;
    /** Validity per row, or null when the column has no nulls. */
    public final boolean[] valid;
    /**
     * The values: int[] (uint16 and int32) or double[]; null for a column read without its values
     * ({@link ArrowFileReader#values(Column)} decodes them), for a list and for a struct.
     */
    public final Object values;
    /**
     * A fixed-width column's values as the file holds them (little-endian, exactly {@code length} values,
     * read only; position 0), or null for a list or a struct: what a checksum over the values reads without
     * encoding them again.
     */
    public final ByteBuffer raw;
    /** A list column's offsets ({@code length + 1}, from 0, non-decreasing, the last one its items), else null. */
    public final int[] offsets;
    /** A list column's offsets as the file holds them (little-endian int32, {@code length + 1}), else null. */
    public final ByteBuffer rawOffsets;
    /** A list's items (one column), a struct's fields; empty for the others. */
    public final List<Column> children;

    Column(String name, ColumnType type, int length, boolean[] valid, Object values, ByteBuffer raw, int[] offsets,
        ByteBuffer rawOffsets, List<Column> children) {
      this.name = name;
      this.type = type;
      this.length = length;
      this.valid = valid;
      this.values = values;
      this.raw = raw;
      this.offsets = offsets;
      this.rawOffsets = rawOffsets;
      this.children = Collections.unmodifiableList(children);
    }
  }

  // ------------------------------------------------------------------------------------------
  // flatbuffers, every read bounds-checked (as hdp_plugin/data/_ipc_check.py's _Buf and _Table)
  // ------------------------------------------------------------------------------------------
  /** Little-endian reads from one block of bytes; a read outside it is an IOException. */
  static final class Flat {
    final ByteBuffer bb;
    final long n;

    /** @param bb the block, from position 0 to its limit */
    Flat(ByteBuffer bb) {
      this.bb = bb.duplicate().order(ByteOrder.LITTLE_ENDIAN);
      this.n = bb.limit();
    }

    void need(long pos, long size) throws IOException {
      if (pos < 0 || size < 0 || pos + size > n) {
        throw new IOException("offset " + pos + " (+" + size + ") is outside its " + n + "-byte block");
      }
    }

    int u8(long pos) throws IOException {
      need(pos, 1);
      return bb.get((int) pos) & 0xFF;
    }

    int i16(long pos) throws IOException {
      need(pos, 2);
      return bb.getShort((int) pos);
    }

    int u16(long pos) throws IOException {
      return i16(pos) & 0xFFFF;
    }

    int i32(long pos) throws IOException {
      need(pos, 4);
      return bb.getInt((int) pos);
    }

    long u32(long pos) throws IOException {
      return i32(pos) & 0xFFFFFFFFL;
    }

    long i64(long pos) throws IOException {
      need(pos, 8);
      return bb.getLong((int) pos);
    }
  }

  /** One flatbuffer table: field {@code i} is found through the table's vtable. */
  static final class Table {
    final Flat buf;
    final long pos;
    final long vt;
    final int vtSize;

    Table(Flat buf, long pos) throws IOException {
      this.buf = buf;
      this.pos = pos;
      this.vt = pos - buf.i32(pos);
      this.vtSize = buf.u16(vt);
      if (vtSize < 4 || vtSize % 2 != 0) {
        throw new IOException("bad vtable size " + vtSize);
      }
      buf.need(vt, vtSize);
    }

    static Table root(Flat buf) throws IOException {
      return new Table(buf, buf.u32(0));
    }

    /** The position of field {@code i}, or -1 when it is absent. */
    long field(int i) throws IOException {
      int o = 4 + 2 * i;
      if (o + 2 > vtSize) {
        return -1;
      }
      int off = buf.u16(vt + o);
      return off == 0 ? -1 : pos + off;
    }

    int u8(int i) throws IOException {
      long p = field(i);
      return p < 0 ? 0 : buf.u8(p);
    }

    int i16(int i) throws IOException {
      long p = field(i);
      return p < 0 ? 0 : buf.i16(p);
    }

    int i32(int i) throws IOException {
      long p = field(i);
      return p < 0 ? 0 : buf.i32(p);
    }

    long i64(int i) throws IOException {
      long p = field(i);
      return p < 0 ? 0 : buf.i64(p);
    }

    Table table(int i) throws IOException {
      long p = field(i);
      return p < 0 ? null : new Table(buf, p + buf.u32(p));
    }

    /** {position of the first element, length} of a vector of {@code size}-byte elements inside the block. */
    long[] vector(int i, int size) throws IOException {
      long p = field(i);
      if (p < 0) {
        return new long[] {0, 0};
      }
      long v = p + buf.u32(p);
      long count = buf.u32(v);
      buf.need(v + 4, count * size);
      return new long[] {v + 4, count};
    }

    List<Table> tables(int i) throws IOException {
      long[] v = vector(i, 4);
      List<Table> out = new ArrayList<>();
      for (long k = 0; k < v[1]; k++) {
        long at = v[0] + 4 * k;
        out.add(new Table(buf, at + buf.u32(at)));
      }
      return out;
    }

    /** A vector of structs of two int64 (FieldNode, Buffer): {first, second} per element. */
    long[][] pairs(int i) throws IOException {
      long[] v = vector(i, 16);
      long[][] out = new long[(int) v[1]][];
      for (int k = 0; k < out.length; k++) {
        out[k] = new long[] {buf.i64(v[0] + 16L * k), buf.i64(v[0] + 16L * k + 8)};
      }
      return out;
    }

    /** A string field's bytes (an absent one is empty). */
    byte[] string(int i) throws IOException {
      long[] v = vector(i, 1);
      byte[] out = new byte[(int) v[1]];
      ByteBuffer d = buf.bb.duplicate();
      d.position((int) v[0]);
      d.get(out);
      return out;
    }
  }

  /** Schema.fbs: the Type union's values that this reader reads, and MessageHeader's RecordBatch. */
  private static final int INT = 2;
  private static final int FLOATING_POINT = 3;
  private static final int LIST = 12;
  private static final int STRUCT = 13;
  private static final int RECORD_BATCH = 3;
  private static final int DOUBLE = 2;

  private static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);

  private final ByteBuffer m_Data;
  private final List<Field> m_Fields = new ArrayList<>();
  private final Map<String, byte[]> m_Metadata = new LinkedHashMap<>();
  private final Set<String> m_Repeated = new TreeSet<>();
  /** per record batch: its offset, metadata length and body length */
  private final List<long[]> m_Blocks = new ArrayList<>();

  /**
   * Parses the footer and the schema of an Arrow IPC file held in memory.
   *
   * @param data the whole file
   * @throws IOException if the bytes are not a complete Arrow IPC file, or use types this reader does
   *           not support
   */
  public ArrowFileReader(byte[] data) throws IOException {
    m_Data = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
    try {
      readFooter(data);
    } catch (IOException e) {
      throw new IOException("not a complete Arrow IPC file (" + e.getMessage() + ")", e);
    }
  }

  private void readFooter(byte[] data) throws IOException {
    int n = data.length;
    if (n < 18 || !startsWithMagic(data, 0) || !startsWithMagic(data, n - MAGIC.length)) {
      throw new IOException("no ARROW1 magic at both ends: truncated, corrupted or another format");
    }
    int footerLength = m_Data.getInt(n - MAGIC.length - 4);
    long footerStart = (long) n - MAGIC.length - 4 - footerLength;
    if (footerLength <= 0 || footerStart < 8) {
      throw new IOException("bad footer length " + footerLength);
    }
    Flat buf = new Flat(slice(footerStart, footerLength));
    Table footer = Table.root(buf);
    Table schema = footer.table(1);
    if (schema == null) {
      throw new IOException("the footer has no schema");
    }
    if (footer.vector(2, 24)[1] > 0) {
      throw new IOException("dictionary-encoded Arrow files are not supported");
    }
    if (schema.i16(0) != 0) {
      throw new IOException("a big-endian file");
    }
    for (Table kv : schema.tables(2)) {
      String key = new String(kv.string(0), StandardCharsets.UTF_8);
      if (m_Metadata.containsKey(key)) {
        m_Repeated.add(key);
      }
      m_Metadata.put(key, kv.string(1));
    }
    for (Table f : schema.tables(1)) {
      m_Fields.add(field(f, 0));
    }
    long[] v = footer.vector(3, 24);
    for (long k = 0; k < v[1]; k++) {
      long at = v[0] + 24 * k;
      m_Blocks.add(new long[] {buf.i64(at), buf.i32(at + 8), buf.i64(at + 16)});
    }
  }

  /** The deepest nesting of lists and structs read (the model file's cells are 2 deep). */
  static final int MAX_FIELD_DEPTH = 8;

  /**
   * A field of the schema, with its children. A type this reader does not read gets a name of its own
   * ({@code int64}, {@code dictionary}, {@code type 5}), which no schema a reader expects has.
   */
  private static Field field(Table t, int depth) throws IOException {
    if (depth > MAX_FIELD_DEPTH) {
      throw new IOException("fields nested deeper than " + MAX_FIELD_DEPTH);
    }
    int kind = t.u8(2);
    Table spec = t.table(3);
    ColumnType type = ColumnType.OTHER;
    String typeName;
    if (t.table(4) != null) {
      typeName = "dictionary";
    } else if (kind == INT) {
      int bits = spec == null ? 0 : spec.i32(0);
      boolean signed = spec != null && spec.u8(1) != 0;
      type = signed && bits == 32 ? ColumnType.INT32 : !signed && bits == 16 ? ColumnType.UINT16 : ColumnType.OTHER;
      typeName = type != ColumnType.OTHER ? type.arrowName : (signed ? "int" : "uint") + bits;
    } else if (kind == FLOATING_POINT) {
      int precision = spec == null ? -1 : spec.i16(0);
      type = precision == DOUBLE ? ColumnType.FLOAT64 : ColumnType.OTHER;
      typeName = type != ColumnType.OTHER ? type.arrowName : "float of precision " + precision;
    } else if (kind == LIST || kind == STRUCT) {
      type = kind == LIST ? ColumnType.LIST : ColumnType.STRUCT;
      typeName = type.arrowName;
    } else {
      typeName = "type " + kind;
    }
    List<Field> children = new ArrayList<>();
    for (Table c : t.tables(5)) {
      children.add(field(c, depth + 1));
    }
    if (type == ColumnType.LIST && children.size() != 1 || type == ColumnType.STRUCT && children.isEmpty()) {
      typeName = typeName + " of " + children.size() + " fields";
      type = ColumnType.OTHER;
    }
    return new Field(new String(t.string(0), StandardCharsets.UTF_8), type, typeName, t.u8(1) != 0, children);
  }

  private static boolean startsWithMagic(byte[] data, int at) {
    for (int i = 0; i < MAGIC.length; i++) {
      if (data[at + i] != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  private ByteBuffer slice(long start, long length) throws IOException {
    if (start < 0 || length < 0 || start + length > m_Data.capacity()) {
      throw new IOException("a block points outside the file (truncated?)");
    }
    return window(m_Data, start, length);
  }

  /** Bytes {@code start} to {@code start + length} of {@code b} (which holds them), little-endian, from 0. */
  private static ByteBuffer window(ByteBuffer b, long start, long length) {
    ByteBuffer d = b.duplicate();
    d.position((int) start);
    d.limit((int) (start + length));
    return d.slice().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** @return the schema's fields, with their children */
  public List<Field> fields() {
    return Collections.unmodifiableList(m_Fields);
  }

  /** @return the column names, in schema order */
  public List<String> fieldNames() {
    List<String> out = new ArrayList<>();
    for (Field f : m_Fields) {
      out.add(f.name);
    }
    return out;
  }

  /** @return the schema's custom metadata: key to raw (UTF-8) value bytes (a key given twice: its last value) */
  public Map<String, byte[]> metadata() {
    return Collections.unmodifiableMap(m_Metadata);
  }

  /** @return the metadata keys the schema gives more than once */
  public Set<String> repeatedKeys() {
    return Collections.unmodifiableSet(m_Repeated);
  }

  /** @return the number of record batches */
  public int numBatches() {
    return m_Blocks.size();
  }

  /**
   * Decodes one record batch, its fixed-width columns' values only if {@code values} (else their
   * {@link Column#values} are null and {@link #values(Column)} decodes them from {@link Column#raw} when
   * wanted: a reader that checks a large file first and then uses one batch at a time holds one batch's
   * arrays at a time).
   *
   * @param index the batch, 0-based
   * @param values whether to decode the fixed-width columns' values now
   * @return its columns, in schema order
   * @throws IOException if the batch is truncated, compressed or inconsistent with the schema
   */
  public List<Column> readBatch(int index, boolean values) throws IOException {
    try {
      return decodeBatch(index, values);
    } catch (IOException e) {
      throw new IOException("unreadable record batch " + index + " (" + e.getMessage() + ")", e);
    }
  }

  /**
   * A column's values, int[] (uint16 and int32) or double[] (null for a list or a struct): {@link Column#values},
   * or decoded now from {@link Column#raw} for a fixed-width column read without them.
   */
  public static Object values(Column c) {
    if (c.values != null || c.raw == null) {
      return c.values;
    }
    return fixedWidth(c.type, c.raw.duplicate().order(ByteOrder.LITTLE_ENDIAN), c.length);
  }

  /** Where decoding one record batch is: its body, its field nodes and buffers, the next of each. */
  private static final class BatchCursor {
    final ByteBuffer body;
    final long[][] nodes;
    final long[][] buffers;
    final boolean decodeValues;
    int fieldNode;
    int buffer;

    BatchCursor(ByteBuffer body, long[][] nodes, long[][] buffers, boolean decodeValues) {
      this.body = body;
      this.nodes = nodes;
      this.buffers = buffers;
      this.decodeValues = decodeValues;
    }

    ByteBuffer nextBuffer() throws IOException {
      long[] b = buffers[buffer++];
      long off = b[0];
      long len = b[1];
      if (off < 0 || len < 0 || off + len > body.capacity()) {
        throw new IOException("a buffer points outside its record batch (truncated file?)");
      }
      return window(body, off, len);
    }
  }

  private List<Column> decodeBatch(int index, boolean decodeValues) throws IOException {
    for (Field f : m_Fields) {
      if (!f.supported()) {
        throw new IOException("column '" + f + "' has a type that is not supported");
      }
    }
    long[] block = m_Blocks.get(index);
    long offset = block[0];
    long metaLength = block[1];
    Flat prefix = new Flat(slice(offset, Math.min(8, metaLength)));
    int skip = 4;
    int fbLength = prefix.i32(0);
    if (fbLength == -1) { // continuation marker, then the length
      fbLength = prefix.i32(4);
      skip = 8;
    }
    if (fbLength <= 0 || skip + fbLength > metaLength) {
      throw new IOException("bad message length " + fbLength);
    }
    Table message = Table.root(new Flat(slice(offset + skip, fbLength)));
    Table rb = message.table(2);
    if (message.u8(1) != RECORD_BATCH || rb == null) {
      throw new IOException("the block is not a record batch");
    }
    if (rb.table(3) != null) {
      throw new IOException("a compressed record batch, which is not supported");
    }
    ByteBuffer body = slice(offset + metaLength, block[2]);
    long rows = rb.i64(0);
    if (rows < 0 || rows > Integer.MAX_VALUE) {
      throw new IOException("bad length " + rows);
    }
    long[][] nodes = rb.pairs(1);
    long[][] buffers = rb.pairs(2);
    int nNodes = 0;
    int nBuffers = 0;
    for (Field f : m_Fields) {
      nNodes += f.fieldNodes();
      nBuffers += f.buffers();
    }
    if (nodes.length != nNodes || buffers.length != nBuffers) {
      throw new IOException(nodes.length + " field nodes and " + buffers.length + " buffers, the schema " + nNodes
        + " and " + nBuffers);
    }
    BatchCursor at = new BatchCursor(body, nodes, buffers, decodeValues);
    List<Column> out = new ArrayList<>(m_Fields.size());
    for (Field f : m_Fields) {
      out.add(column(at, f, rows, false));
    }
    return out;
  }

  /**
   * The column of field {@code f}, which must have {@code rows} rows; its children's columns follow it
   * depth first. Nulls are read in a top-level column; a list, a struct and their children have none.
   */
  private Column column(BatchCursor at, Field f, long rows, boolean nested) throws IOException {
    long[] node = at.nodes[at.fieldNode++];
    String name = f.name;
    if (node[0] != rows) {
      throw new IOException("column '" + name + "' has " + node[0] + " rows, " + rows + " expected");
    }
    int n = (int) rows;
    long nulls = node[1];
    boolean nullsRefused = nested || f.type == ColumnType.LIST || f.type == ColumnType.STRUCT;
    if (nulls != 0 && (nullsRefused || nulls < 0 || nulls > n)) {
      throw new IOException("column '" + name + "': " + nulls + " nulls"
        + (nullsRefused ? " in a list or a struct, which is not supported" : ""));
    }
    ByteBuffer validity = at.nextBuffer();
    boolean[] valid = nulls > 0 ? bits(validity, n, name) : null;
    switch (f.type) {
      case LIST: {
        ByteBuffer rawOffsets = window(need(at.nextBuffer(), 4L * (n + 1L), name), 0, 4 * (n + 1)).asReadOnlyBuffer();
        int[] offsets = new int[n + 1];
        rawOffsets.duplicate().order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(offsets);
        if (offsets[0] != 0) {
          throw new IOException("column '" + name + "': bad list offsets");
        }
        for (int i = 0; i < n; i++) {
          if (offsets[i + 1] < offsets[i]) {
            throw new IOException("column '" + name + "': bad list offsets");
          }
        }
        Column items = column(at, f.children.get(0), offsets[n], true);
        return new Column(name, f.type, n, null, null, null, offsets, rawOffsets, Collections.singletonList(items));
      }
      case STRUCT: {
        List<Column> children = new ArrayList<>(f.children.size());
        for (Field c : f.children) {
          children.add(column(at, c, n, true));
        }
        return new Column(name, f.type, n, null, null, null, null, null, children);
      }
      case UINT16:
      case INT32:
      case FLOAT64: {
        long bytes = (long) f.type.width * n;
        ByteBuffer d = need(at.nextBuffer(), bytes, name); // so bytes fits the buffer's int capacity
        return new Column(name, f.type, n, valid, at.decodeValues ? fixedWidth(f.type, d, n) : null,
          window(d, 0, bytes).asReadOnlyBuffer(), null, null, Collections.emptyList());
      }
      default:
        throw new AssertionError(f.type);
    }
  }

  /** The values of a fixed-width column: int[] (uint16 and int32) or double[]. */
  private static Object fixedWidth(ColumnType type, ByteBuffer d, int n) {
    d = d.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    switch (type) {
      case UINT16: {
        java.nio.ShortBuffer s = d.asShortBuffer();
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
          a[i] = s.get(i) & 0xFFFF;
        }
        return a;
      }
      case INT32: {
        int[] a = new int[n];
        d.asIntBuffer().get(a);
        return a;
      }
      default: {
        double[] a = new double[n];
        d.asDoubleBuffer().get(a);
        return a;
      }
    }
  }

  private static ByteBuffer need(ByteBuffer b, long bytes, String name) throws IOException {
    if (b.capacity() < bytes) {
      throw new IOException("column '" + name + "': data buffer too short");
    }
    return b;
  }

  private static boolean[] bits(ByteBuffer b, int n, String name) throws IOException {
    need(b, (n + 7L) / 8, name);
    boolean[] out = new boolean[n];
    for (int i = 0; i < n; i++) {
      out[i] = (b.get(i >>> 3) & (1 << (i & 7))) != 0;
    }
    return out;
  }
}
